/**
 * A succeeded run's poster frame and sprite sheet end to end: the poster's signed URL in the run,
 * served as a JPEG of the video's size, and the sprite sheet kept beside the video.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FFPROBE } from "../src/media/ffmpeg.js";
import { C, D, quickD } from "./api-fixtures.js";
import { type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();
let dir: string;
let tenant: Tenant;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-previews-"));
  tenant = await t.tenant();
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** What ffprobe reads in `bytes`: codec and size. */
async function probe(bytes: Buffer) {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.jpg`);
  await writeFile(path, bytes);
  const { stdout } = await promisify(execFile)(FFPROBE, [
    ...["-v", "error", "-select_streams", "v:0"],
    ...["-show_entries", "stream=codec_name,width,height", "-of", "json", path],
  ]);
  return (JSON.parse(stdout) as { streams: unknown[] }).streams[0];
}

describe("posters and sprite sheets", () => {
  it("gives a succeeded run a poster URL that serves a JPEG of the video's size", async () => {
    const run = await tenant.client.submit(D, quickD(), { sync: true });
    expect(run.status).toBe("succeeded");
    const thumbnailUrl = run.output?.videos[0]?.thumbnail_url ?? "";
    expect(thumbnailUrl).toMatch(/\/v1\/files\/file_[^?]+\?expires=\d+&signature=/);
    expect(thumbnailUrl).not.toBe(run.output?.videos[0]?.url);

    const res = await fetch(thumbnailUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/jpeg");
    // The simulated provider's videos are 320x180: the poster keeps that size.
    expect(await probe(Buffer.from(await res.arrayBuffer()))).toEqual({
      codec_name: "mjpeg",
      width: 320,
      height: 180,
    });

    const stored = await t.refvid.deps.store.getRun(tenant.organizationId, run.run_id);
    const spritesheet = stored?.output?.spritesheetFileId ?? "";
    expect(spritesheet).toMatch(/^file_/);
    expect(await t.refvid.deps.blobs.stat(spritesheet)).toMatchObject({ contentType: "image/jpeg" });
  });

  it("gives model-c's output, which carries only its url, the poster URL too", async () => {
    const input = { prompt: "[simulate:delay=0] c", reference_image_urls: ["https://example.com/a.png"] };
    const run = await tenant.client.submit(C, { ...input, duration: 2 }, { sync: true });
    expect(run.output?.videos[0]).toEqual({
      url: expect.stringMatching(/\/v1\/files\//),
      thumbnail_url: expect.stringMatching(/\/v1\/files\//),
    });
  });
});
