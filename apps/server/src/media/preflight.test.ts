import { mkdtemp, readFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MODELS, type ModelInput, type BuiltInModelSlug as ModelSlug, normalizeInput } from "@refvid/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffmpeg } from "./ffmpeg.js";
import { InvalidReferenceMedia, preflight } from "./preflight.js";
import { sniffFormat } from "./sniff.js";

// Fixtures made with ffmpeg at test time, served from a local server the tests allow.
const files = new Map<string, Buffer>();
let server: Server;
let base: string;
let dir: string;

async function make(name: string, args: string[]) {
  const path = join(dir, name);
  await ffmpeg([...args, path], { timeoutMs: 60_000 });
  files.set(name, await readFile(path));
}
const still = ["-f", "lavfi", "-i", "testsrc2=size=64x36:duration=1", "-frames:v", "1"];
const clip = (seconds: number) => [
  "-f",
  "lavfi",
  "-i",
  `testsrc2=size=64x36:rate=10:duration=${seconds}`,
  "-c:v",
  "libx264",
  "-preset",
  "ultrafast",
  "-pix_fmt",
  "yuv420p",
];
const tone = (seconds: number) => ["-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "preflight-"));
  await Promise.all([
    make("a.jpg", still),
    make("a.png", still),
    make("a.webp", [...still, "-c:v", "libwebp"]),
    make("a.bmp", still),
    make("a.tiff", still),
    make("a.gif", still),
    make("3s.mp4", clip(3)),
    make("3s.mov", clip(3)),
    make("1s.mp4", clip(1)),
    make("8s.mp4", clip(8)),
    make("16s.mp4", clip(16)),
    make("31s.mp4", clip(31)),
    make("2s.mp3", [...tone(2), "-c:a", "libmp3lame"]),
    make("2s.wav", tone(2)),
    make("16s.wav", tone(16)),
    make("31s.wav", tone(31)),
  ]);
  files.set("fake.png", Buffer.from("this is plain text, not an image at all"));
  const mp4 = files.get("3s.mp4") as Buffer;
  files.set("corrupt.mp4", Buffer.concat([mp4.subarray(0, 32), Buffer.alloc(2000, 7)]));
  files.set(
    "fake.heic",
    Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypheic"), Buffer.alloc(100)]),
  );
  files.set(
    "huge.png",
    Buffer.concat([(files.get("a.png") as Buffer).subarray(0, 16), Buffer.alloc(31 * 1024 * 1024)]),
  );
  server = createServer((req, res) => {
    const name = (req.url ?? "/").slice(1);
    if (name === "page.html")
      return res.writeHead(200, { "content-type": "text/html" }).end("<html>hi</html>");
    const body = files.get(name);
    if (!body) return res.writeHead(404).end();
    res.writeHead(200, { "content-length": String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const A = "lab-a/model-a/reference-to-video";
const B = "lab-b/model-b/reference-to-video";
const C = "lab-c/model-c/reference-to-video";
const u = (...names: string[]) => names.map((n) => `${base}/${n}`);

async function check(slug: ModelSlug, input: (urls: typeof u) => ModelInput) {
  const workDir = await mkdtemp(join(tmpdir(), "preflight-run-"));
  return preflight(MODELS[slug], normalizeInput(slug, input(u)), {
    workDir,
    allowLocal: false,
    signal: new AbortController().signal,
    allowAddresses: new Set(["127.0.0.1"]),
  });
}

describe("media preflight accepts what the interface allows", () => {
  it("takes every image format, MP4 and MOV clips, MP3 and WAV audio (model-a)", async () => {
    const refs = await check(A, (urls) => ({
      prompt: "p",
      image_urls: urls("a.jpg", "a.png", "a.webp", "a.bmp", "a.tiff", "a.gif", "fake.heic"),
      video_urls: urls("3s.mp4", "3s.mov"),
      audio_urls: urls("2s.mp3", "2s.wav"),
    }));
    expect(refs.map((r) => r.format)).toEqual([
      "jpeg",
      "png",
      "webp",
      "bmp",
      "tiff",
      "gif",
      "heic",
      "mp4",
      "mov",
      "mp3",
      "wav",
    ]);
    const clip = refs.find((r) => r.format === "mov");
    expect(clip?.durationSeconds).toBeCloseTo(3, 0);
  });

  it("takes clips within model-b's 2 to 15 s, together at most 15 s", async () => {
    const refs = await check(B, (urls) => ({
      prompt: "p",
      reference_video_urls: urls("3s.mp4", "8s.mp4"),
      reference_audio_urls: urls("2s.wav"),
    }));
    expect(refs).toHaveLength(3);
  });
});

// [name, slug, input, message]: every media rule of every model that has one, broken once.
const refused: [string, ModelSlug, (urls: typeof u) => ModelInput, RegExp][] = [
  [
    "model-a: a video clip under 1.8 s",
    A,
    (x) => ({ prompt: "p", video_urls: x("1s.mp4") }),
    /video_urls\[0\].*lasts 1\.0 s; each video clip must last 1\.8 to 30\.2 s/,
  ],
  [
    "model-a: a video clip over 30.2 s",
    A,
    (x) => ({ prompt: "p", video_urls: x("31s.mp4") }),
    /lasts 31\.0 s; each video clip must last 1\.8 to 30\.2 s/,
  ],
  [
    "model-a: clips over 30.2 s together",
    A,
    (x) => ({ prompt: "p", video_urls: x("16s.mp4", "16s.mp4") }),
    /video_urls\[1\].*brings the video clips to 32\.0 s; together they may last at most 30\.2 s/,
  ],
  [
    "model-a: an audio track over 30.2 s",
    A,
    (x) => ({ prompt: "p", image_urls: x("a.png"), audio_urls: x("31s.wav") }),
    /audio_urls\[0\].*lasts 31\.0 s/,
  ],
  [
    "model-a: audio tracks over 30.2 s together",
    A,
    (x) => ({ prompt: "p", image_urls: x("a.png"), audio_urls: x("16s.wav", "16s.wav") }),
    /together they may last at most 30\.2 s/,
  ],
  [
    "model-a: text named .png",
    A,
    (x) => ({ prompt: "p", image_urls: x("fake.png") }),
    /image_urls\[0\].*is not a recognised media file; image_urls takes JPEG, PNG/,
  ],
  [
    "model-a: a web page",
    A,
    (x) => ({ prompt: "p", image_urls: x("page.html") }),
    /is not a recognised media file/,
  ],
  [
    "model-a: a video given as an image",
    A,
    (x) => ({ prompt: "p", image_urls: x("3s.mp4") }),
    /is MP4; image_urls takes/,
  ],
  [
    "model-a: an image given as a video",
    A,
    (x) => ({ prompt: "p", video_urls: x("a.png") }),
    /video_urls\[0\].*is PNG; video_urls takes MP4, MOV/,
  ],
  [
    "model-a: WAV given as video",
    A,
    (x) => ({ prompt: "p", video_urls: x("2s.wav") }),
    /is WAV; video_urls takes MP4, MOV/,
  ],
  [
    "model-a: an MP4 given as audio",
    A,
    (x) => ({ prompt: "p", image_urls: x("a.png"), audio_urls: x("3s.mp4") }),
    /audio_urls\[0\].*is MP4; audio_urls takes MP3, WAV/,
  ],
  [
    "model-a: a corrupt MP4",
    A,
    (x) => ({ prompt: "p", video_urls: x("corrupt.mp4") }),
    /cannot be read as video: it is corrupt or truncated/,
  ],
  [
    "model-a: an image over 30 MB",
    A,
    (x) => ({ prompt: "p", image_urls: x("huge.png") }),
    /is larger than 30 MB, the limit for images/,
  ],
  [
    "model-a: a missing file",
    A,
    (x) => ({ prompt: "p", image_urls: x("nothing.png") }),
    /could not be downloaded: HTTP 404/,
  ],
  [
    "model-b: a video clip under 2 s",
    B,
    (x) => ({ prompt: "p", reference_video_urls: x("1s.mp4") }),
    /reference_video_urls\[0\].*lasts 1\.0 s; each video clip must last 2 to 15 s/,
  ],
  [
    "model-b: a video clip over 15 s",
    B,
    (x) => ({ prompt: "p", reference_video_urls: x("16s.mp4") }),
    /lasts 16\.0 s; each video clip must last 2 to 15 s/,
  ],
  [
    "model-b: clips over 15 s together",
    B,
    (x) => ({ prompt: "p", reference_video_urls: x("8s.mp4", "8s.mp4") }),
    /brings the video clips to 16\.0 s; together they may last at most 15 s/,
  ],
  [
    "model-b: an audio clip over 15 s",
    B,
    (x) => ({ prompt: "p", reference_image_urls: x("a.png"), reference_audio_urls: x("16s.wav") }),
    /reference_audio_urls\[0\].*lasts 16\.0 s/,
  ],
  [
    "model-c: a video given as an image",
    C,
    (x) => ({ prompt: "p", reference_image_urls: x("3s.mp4") }),
    /reference_image_urls\[0\].*is MP4/,
  ],
  [
    "model-c: a loopback URL without the test exception",
    C,
    () => ({ prompt: "p", reference_image_urls: ["http://127.0.0.2/a.png"] }),
    /could not be downloaded: 127\.0\.0\.2 is loopback/,
  ],
];

describe("media preflight refuses what the interface does not allow", () => {
  it.each(refused)("%s", async (_name, slug, input, message) => {
    const error = await check(slug, input).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidReferenceMedia);
    expect((error as Error).message).toMatch(message);
  });
});

describe("sniffFormat", () => {
  it("knows a format from its bytes, not its name", () => {
    expect(sniffFormat(files.get("a.png") as Buffer)).toBe("png");
    expect(sniffFormat(files.get("fake.png") as Buffer)).toBeNull();
    expect(sniffFormat(Buffer.alloc(4))).toBeNull();
  });
});
