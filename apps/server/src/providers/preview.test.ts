import { execFile } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { MODELS, type ModelInput, type BuiltInModelSlug as ModelSlug, normalizeInput } from "@refvid/core";
import { beforeAll, describe, expect, it } from "vitest";
import { FFPROBE, ffmpeg, probeDuration } from "../media/ffmpeg.js";
import type { LocalReference } from "../media/local-reference.js";
import { PreviewProvider } from "./preview.js";
import { describeProviderContract } from "./provider.contract.js";

describeProviderContract("PreviewProvider", async () => new PreviewProvider(), "slow");

let dir: string;
const fixture = async (name: string, args: string[]) => {
  const path = join(dir, name);
  await ffmpeg([...args, path], { timeoutMs: 60_000 });
  return path;
};
let landscape: string;
let portrait: string;
let clip: string;
let track: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "preview-"));
  [landscape, portrait, clip, track] = await Promise.all([
    fixture("land.png", ["-f", "lavfi", "-i", "testsrc2=size=320x180", "-frames:v", "1"]),
    fixture("port.jpg", ["-f", "lavfi", "-i", "testsrc2=size=120x180", "-frames:v", "1"]),
    fixture("clip.mp4", [
      "-f",
      "lavfi",
      "-i",
      "testsrc2=size=160x90:rate=10:duration=3",
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      "yuv420p",
    ]),
    fixture("track.wav", ["-f", "lavfi", "-i", "sine=frequency=330:duration=2"]),
  ]);
}, 60_000);

const ref = (kind: LocalReference["kind"], path: string, durationSeconds?: number): LocalReference => ({
  kind,
  url: `https://example.com/${path.split("/").pop()}`,
  path,
  format: path.endsWith(".png")
    ? "png"
    : path.endsWith(".jpg")
      ? "jpeg"
      : path.endsWith(".wav")
        ? "wav"
        : "mp4",
  bytes: 1,
  ...(durationSeconds === undefined ? {} : { durationSeconds }),
});

async function streams(path: string) {
  const { stdout } = await promisify(execFile)(FFPROBE, [
    "-v",
    "error",
    "-show_entries",
    "stream=codec_type,codec_name,width,height",
    "-of",
    "json",
    path,
  ]);
  return (
    JSON.parse(stdout) as {
      streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
    }
  ).streams;
}

// [name, slug, input, references, width, height, seconds, audio]
const cases: [string, ModelSlug, ModelInput, () => LocalReference[], number, number, number, boolean][] = [
  [
    "model-a 480p 16:9, audio generated",
    "lab-a/model-a/reference-to-video",
    { prompt: "@Image1 waves", duration: "4", resolution: "480p", aspect_ratio: "16:9" },
    () => [ref("image", landscape)],
    854,
    480,
    4,
    true,
  ],
  [
    "model-a 720p 9:16 from a clip, no audio",
    "lab-a/model-a/reference-to-video",
    { prompt: "p", duration: "4", resolution: "720p", aspect_ratio: "9:16", generate_audio: false },
    () => [ref("video", clip, 3)],
    720,
    1280,
    4,
    false,
  ],
  [
    "model-a 1080p 1:1, image and clip with a reference track",
    "lab-a/model-a/reference-to-video",
    { prompt: "p", duration: "4", resolution: "1080p", aspect_ratio: "1:1" },
    () => [ref("image", landscape), ref("video", clip, 3), ref("audio", track, 2)],
    1080,
    1080,
    4,
    true,
  ],
  [
    "model-a auto follows a portrait image and lasts 5 s per image",
    "lab-a/model-a/reference-to-video",
    { prompt: "p", resolution: "720p" },
    () => [ref("image", portrait)],
    720,
    1080,
    5,
    true,
  ],
  [
    "model-a 480p 3:4",
    "lab-a/model-a/reference-to-video",
    { prompt: "p", duration: "4", resolution: "480p", aspect_ratio: "3:4", generate_audio: false },
    () => [ref("image", portrait)],
    480,
    640,
    4,
    false,
  ],
  [
    "model-a auto with a 3 s clip lasts the 4 s minimum",
    "lab-a/model-a/reference-to-video",
    { prompt: "p", resolution: "480p", aspect_ratio: "4:3" },
    () => [ref("video", clip, 3)],
    640,
    480,
    4,
    true,
  ],
  [
    "model-b 768P 21:9 with its reference audio",
    "lab-b/model-b/reference-to-video",
    {
      prompt: "p",
      duration: 5,
      resolution: "768P",
      aspect_ratio: "21:9",
      reference_image_urls: ["https://example.com/a.png"],
      reference_audio_urls: ["https://example.com/t.wav"],
    },
    () => [ref("image", landscape), ref("audio", track, 2)],
    1792,
    768,
    5,
    true,
  ],
  [
    "model-b 480P adaptive without audio",
    "lab-b/model-b/reference-to-video",
    { prompt: "p", duration: 5, resolution: "480P" },
    () => [ref("image", landscape)],
    854,
    480,
    5,
    false,
  ],
  [
    "model-c 480p 9:16",
    "lab-c/model-c/reference-to-video",
    {
      prompt: "p",
      duration: 3,
      resolution: "480p",
      aspect_ratio: "9:16",
      reference_image_urls: ["https://example.com/a.png"],
    },
    () => [ref("image", landscape)],
    480,
    854,
    3,
    true,
  ],
  [
    "model-d 1080p 16:9 without audio",
    "lab-d/model-d/reference-to-video",
    {
      prompt: "p",
      duration: "4s",
      resolution: "1080p",
      generate_audio: false,
      image_urls: ["https://example.com/a.png"],
    },
    () => [ref("image", landscape)],
    1920,
    1080,
    4,
    false,
  ],
];

describe("PreviewProvider renders what was asked", () => {
  it.each(cases)(
    "%s",
    async (_name, slug, input, references, width, height, seconds, audio) => {
      const workDir = await mkdtemp(join(tmpdir(), "preview-run-"));
      const provider = new PreviewProvider();
      const result = await provider.run(
        {
          runId: "run_preview",
          request: normalizeInput(slug, input),
          input: {},
          workDir,
          references: references(),
          maxDurationSeconds: MODELS[slug].maxDurationSeconds,
        },
        { signal: new AbortController().signal, onProgress: () => {} },
      );
      const found = await streams(result.path);
      expect(found.find((s) => s.codec_type === "video")).toMatchObject({
        codec_name: "h264",
        width,
        height,
      });
      expect(found.some((s) => s.codec_type === "audio" && s.codec_name === "aac")).toBe(audio);
      expect(Math.abs((await probeDuration(result.path, { timeoutMs: 10_000 })) - seconds)).toBeLessThan(0.1);
    },
    120_000,
  );
});

describe("PreviewProvider's progress", () => {
  it("follows the render: a 20 s video reports fractions that rise as ffmpeg writes it", async () => {
    const workDir = await mkdtemp(join(tmpdir(), "preview-progress-"));
    const reported: number[] = [];
    const started = performance.now();
    await new PreviewProvider().run(
      {
        runId: "run_preview_progress",
        request: normalizeInput("lab-a/model-a/reference-to-video", {
          prompt: "a slow pan",
          image_urls: ["https://example.com/land.png", "https://example.com/port.jpg"],
          duration: "20",
          resolution: "1080p",
        }),
        input: {},
        workDir,
        references: [ref("image", landscape), ref("image", portrait)],
        maxDurationSeconds: 30,
      },
      { signal: new AbortController().signal, onProgress: (fraction) => reported.push(fraction) },
    );
    expect(reported[0]).toBe(0.1);
    expect(reported.at(-1)).toBe(0.95);
    for (let i = 1; i < reported.length; i++) expect(reported[i]).toBeGreaterThan(reported[i - 1] as number);
    // Reports from the render itself, between the start and the end marks: ffmpeg writes one about
    // every half second, so a render that took longer brings more (five here, where it takes ~4 s).
    const halfSeconds = Math.floor((performance.now() - started) / 500);
    expect(reported.filter((f) => f > 0.1 && f < 0.95).length).toBeGreaterThanOrEqual(
      Math.max(1, Math.min(5, halfSeconds - 2)),
    );
  }, 120_000);
});
