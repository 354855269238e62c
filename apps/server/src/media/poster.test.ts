import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FFPROBE, ffmpeg } from "./ffmpeg.js";
import { posterTime, renderPoster, renderSpriteSheet } from "./poster.js";

let dir: string;

/** An H.264 MP4 of ffmpeg's test pattern, as providers deliver. */
async function clip(name: string, size: string, seconds: number): Promise<string> {
  const path = join(dir, name);
  const source = `testsrc2=size=${size}:rate=10:duration=${seconds}`;
  await ffmpeg(
    ["-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", path],
    { timeoutMs: 60_000 },
  );
  return path;
}

/** The codec and size ffprobe reads in an image. */
async function probe(path: string) {
  const { stdout } = await promisify(execFile)(FFPROBE, [
    ...["-v", "error", "-select_streams", "v:0"],
    ...["-show_entries", "stream=codec_name,width,height", "-of", "json", path],
  ]);
  return (JSON.parse(stdout) as { streams: unknown[] }).streams[0];
}

const videos: Record<string, string> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "poster-"));
  videos.wide = await clip("wide.mp4", "1600x900", 3);
  videos.portrait = await clip("portrait.mp4", "180x320", 1);
}, 60_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

const options = { timeoutMs: 30_000 };

describe("renderPoster", () => {
  it.each([
    ["scales a large video to 1280 px on its long side", "wide", 3, { width: 1280, height: 720 }],
    ["keeps a small portrait video's own size", "portrait", 1, { width: 180, height: 320 }],
  ])("%s", async (_name, video, seconds, size) => {
    const out = join(dir, `${video}-poster.jpg`);
    await renderPoster(videos[video] as string, out, seconds, options);
    expect(await probe(out)).toEqual({ codec_name: "mjpeg", ...size });
  });

  it("takes the frame a second in, or half-way through a shorter video", () => {
    expect([posterTime(8), posterTime(1), posterTime(0.4)]).toEqual([1, 0.5, 0.2]);
  });

  it("fails for a file that is not a video", async () => {
    const out = join(dir, "none.jpg");
    await expect(renderPoster(join(dir, "missing.mp4"), out, 3, options)).rejects.toThrow(/ffmpeg failed/);
  });
});

describe("renderSpriteSheet", () => {
  it.each([
    ["a 5x5 grid of 160 px frames", "wide", 3, { width: 800, height: 450 }],
    ["a full grid from a one-second video", "portrait", 1, { width: 800, height: 1420 }],
  ])("%s", async (_name, video, seconds, size) => {
    const out = join(dir, `${video}-sprites.jpg`);
    await renderSpriteSheet(videos[video] as string, out, seconds, options);
    expect(await probe(out)).toEqual({ codec_name: "mjpeg", ...size });
  });

  it("takes another layout", async () => {
    const out = join(dir, "small-sprites.jpg");
    const layout = { columns: 2, rows: 3, tileWidth: 100 };
    await renderSpriteSheet(videos.wide as string, out, 3, { ...options, layout });
    expect(await probe(out)).toEqual({ codec_name: "mjpeg", width: 200, height: 168 });
  });
});
