import { randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BlobStore } from "../files/blob-store.js";
import { LocalBlobStore } from "../files/local-blob-store.js";
import { ffmpeg } from "../media/ffmpeg.js";
import { PREVIEW_RESERVE_MS, renderPreviews, storePreviews } from "./previews.js";

let dir: string;
let video: string;
const warnings: string[] = [];
const log = pino({ level: "warn" }, { write: (line: string) => warnings.push(JSON.parse(line).msg) });
const running = () => new AbortController().signal;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "previews-"));
  video = join(dir, "video.mp4");
  const source = "testsrc2=size=320x180:rate=10:duration=2";
  await ffmpeg(["-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "ultrafast", video], {
    timeoutMs: 60_000,
  });
}, 60_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

/** A blob store whose second put fails with `error`, keeping what it stored in `stored`. */
function failingSecondPut(error: Error): BlobStore & { stored: Set<string> } {
  const stored = new Set<string>();
  const local = new LocalBlobStore(join(dir, `blobs-${randomUUID()}`));
  return Object.assign(Object.create(local) as BlobStore, {
    stored,
    put: async (id: string, source: string, options?: { contentType?: string }) => {
      if (stored.size === 1) throw error;
      stored.add(id);
      return local.put(id, source, options);
    },
    delete: async (id: string) => {
      stored.delete(id);
      await local.delete(id);
    },
  });
}

/** Time before the run's deadline when nothing presses. */
const LONG = 600_000;

describe("renderPreviews", () => {
  it("renders a poster and a sprite sheet that the blob store keeps as JPEGs", async () => {
    const workDir = await mkdtemp(join(dir, "work-"));
    const rendered = await renderPreviews(video, 2, { workDir, signal: running(), log, timeLeftMs: LONG });
    const blobs = new LocalBlobStore(join(dir, "blobs"));
    const ids = await storePreviews(blobs, rendered, { signal: running(), log });
    expect(ids).toEqual({
      thumbnailFileId: expect.stringMatching(/^file_/),
      spritesheetFileId: expect.any(String),
    });
    for (const id of Object.values(ids)) {
      expect(await blobs.stat(id)).toMatchObject({ contentType: "image/jpeg", size: expect.any(Number) });
    }
  });

  it("answers null and warns for a video ffmpeg cannot read: the run goes on", async () => {
    const workDir = await mkdtemp(join(dir, "work-"));
    const broken = join(workDir, "broken.mp4");
    await writeFile(broken, "not a video");
    warnings.length = 0;
    await expect(
      renderPreviews(broken, 2, { workDir, signal: running(), log, timeLeftMs: LONG }),
    ).resolves.toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/could not render the run's poster/)]);
  });

  it("renders nothing when the run's deadline is too close: the video is stored and the run ends in time", async () => {
    const workDir = await mkdtemp(join(dir, "work-"));
    warnings.length = 0;
    const left = PREVIEW_RESERVE_MS + 1_500;
    await expect(
      renderPreviews(video, 2, { workDir, signal: running(), log, timeLeftMs: left }),
    ).resolves.toBeNull();
    expect(warnings).toEqual([expect.stringMatching(/too close to the run's deadline/)]);
  });

  it("throws when the run was stopped, as the video's own work would", async () => {
    const workDir = await mkdtemp(join(dir, "work-"));
    const controller = new AbortController();
    controller.abort(new Error("run stopped: cancelled"));
    await expect(
      renderPreviews(video, 2, { workDir, signal: controller.signal, log, timeLeftMs: LONG }),
    ).rejects.toThrow(/cancelled/);
  });
});

describe("storePreviews", () => {
  const rendered = async () => {
    const workDir = await mkdtemp(join(dir, "work-"));
    const paths = { poster: join(workDir, "p.jpg"), spritesheet: join(workDir, "s.jpg") };
    await writeFile(paths.poster, "jpeg");
    await writeFile(paths.spritesheet, "jpeg");
    return paths;
  };

  it("stores nothing when nothing was rendered", async () => {
    const blobs = failingSecondPut(new Error("unused"));
    await expect(storePreviews(blobs, null, { signal: running(), log })).resolves.toEqual({});
    expect(blobs.stored.size).toBe(0);
  });

  it("keeps neither when one fails, and warns: the run goes on", async () => {
    const blobs = failingSecondPut(new Error("bucket unreachable"));
    warnings.length = 0;
    await expect(storePreviews(blobs, await rendered(), { signal: running(), log })).resolves.toEqual({});
    expect(blobs.stored.size).toBe(0);
    expect(warnings).toEqual([expect.stringMatching(/could not store the run's poster/)]);
  });

  it("keeps neither and throws on a full disk, which hands the run back like the video's", async () => {
    const blobs = failingSecondPut(Object.assign(new Error("no space left"), { code: "ENOSPC" }));
    await expect(storePreviews(blobs, await rendered(), { signal: running(), log })).rejects.toMatchObject({
      code: "ENOSPC",
    });
    expect(blobs.stored.size).toBe(0);
  });
});
