/**
 * A full disk, for real (docs/decisions.md, "Files and object storage"): the blob store's directory
 * is a 2 MiB tmpfs, filled to the last byte. An upload that finds it full answers `503` with
 * `Retry-After`, keeps nothing and holds no file open, and the server goes on serving; a run whose
 * video cannot be written goes back to the queue instead of failing `internal_error`, and succeeds
 * once there is room; a reference, a vendor's video or ffmpeg's output that cannot be written to a
 * run's work directory is a full disk, not the reference's or the vendor's fault.
 *
 * Mounting needs root (CAP_SYS_ADMIN), as the test suite runs; without it this file fails, saying so.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, open, readdir, readFile, rm, statfs } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { MODELS, normalizeInput } from "@refvid/core";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ffmpeg } from "../src/media/ffmpeg.js";
import { preflight } from "../src/media/preflight.js";
import { fetchOutputVideo } from "../src/providers/upstream/output.js";
import { storageFullOf } from "../src/storage-full.js";
import { D, fast } from "./api-fixtures.js";
import { eventually, useTestRefvid } from "./harness.js";
import { openFiles, SCULPTURE, specSchema } from "./upload-helpers.js";

const isError = specSchema("Error");

/** A data directory whose `files` (the local blob store) is a 2 MiB tmpfs of its own. */
function useSmallDisk() {
  const disk = { dataDir: "", files: "" };
  beforeAll(async () => {
    disk.dataDir = await mkdtemp(join(tmpdir(), "refvid-disk-full-"));
    disk.files = join(disk.dataDir, "files");
    await mkdir(disk.files);
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", disk.files], { stdio: "pipe" });
    } catch (err) {
      throw new Error(
        `could not mount a 2 MiB tmpfs on ${disk.files} to fill a real disk: ${String((err as { stderr?: unknown }).stderr ?? err)}. ` +
          "This test needs root (CAP_SYS_ADMIN), as the test suite runs.",
      );
    }
  });
  afterAll(async () => {
    execFileSync("umount", [disk.files]);
    await rm(disk.dataDir, { recursive: true, force: true });
  });
  return disk;
}

/**
 * Fills `dir` with a file of its own until the disk refuses a byte more, then frees `leave` bytes
 * of it (whole pages); resolves to a function that frees the rest.
 */
async function fill(dir: string, leave = 0): Promise<() => Promise<void>> {
  const path = join(dir, "filler");
  const handle = await open(path, "w");
  const block = Buffer.alloc(4096, 1);
  try {
    for (;;) await handle.write(block);
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOSPC") throw err;
  }
  if (leave > 0) await handle.truncate((await handle.stat()).size - leave);
  await handle.close();
  const free = await statfs(dir);
  expect(free.bavail * free.bsize).toBeLessThanOrEqual(leave);
  return () => rm(path, { force: true });
}

/** Log lines of a refvid running in this process, as pino writes them. */
function logSink() {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    }),
  );
  return { logger, lines, errors: () => lines.filter((line) => line.level >= 50) };
}

describe("a full disk", () => {
  const disk = useSmallDisk();
  const logs = logSink();
  const server = useTestRefvid(() => ({ REFVID_DATA_DIR: disk.dataDir }), { logger: logs.logger });

  /** What is in the blob store besides the filler, and what of it this process holds open. */
  const leftovers = async () => ({
    files: (await readdir(disk.files)).filter((name) => name !== "filler"),
    open: (await openFiles()).filter((target) => target.startsWith(disk.files)),
  });

  it("answers an upload that cannot be written with 503 and Retry-After, keeps nothing, and goes on serving", async () => {
    const t = await server.tenant({ rateLimitPerMinute: 1_000 });
    // 64 KiB left: each upload starts to be written, then finds the disk full.
    const free = await fill(disk.files, 64 * 1024);
    const big = Buffer.concat([await readFile(SCULPTURE), Buffer.alloc(512 * 1024)]);
    const form = new FormData();
    form.append("file", new Blob([big]), "big.png");
    const errorsBefore = logs.errors().length;
    for (const [body, headers] of [
      [big, { "content-type": "image/png" }],
      [form, {}],
    ] as const) {
      const res = await fetch(`${server.url}/v1/files`, {
        method: "POST",
        headers: { authorization: `Key ${t.apiKey}`, ...headers },
        body,
      });
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toBe("60");
      const answer = (await res.json()) as { error: { type: string; message: string } };
      isError(answer);
      expect(answer.error).toMatchObject({ type: "service_unavailable", code: 503 });
      expect(answer.error.message).toMatch(/storage is full/);
    }
    // Nothing kept, nothing open; each request logged once, at error, with the file it could not write.
    await eventually(
      async () => ((await leftovers()).open.length === 0 ? true : undefined),
      10_000,
      "files closed",
    );
    expect(await leftovers()).toEqual({ files: [], open: [] });
    const errors = logs.errors().slice(errorsBefore);
    expect(errors.map((line) => [line.msg, line.code])).toEqual([
      ["the disk is full; the request's bytes were not kept", "ENOSPC"],
      ["the disk is full; the request's bytes were not kept", "ENOSPC"],
    ]);
    for (const line of errors)
      expect(String(line.path)).toMatch(new RegExp(`^${disk.files}/upload_\\w+\\.partial-`));
    expect(logs.lines.some((line) => line.msg === "unhandled error")).toBe(false);

    expect((await t.call("GET", "/v1/account")).status).toBe(200);
    await free();
    const again = await fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      body: big,
    });
    expect(again.status).toBe(201);
  });

  it("puts a run whose video cannot be written back in the queue, never failed, and ends it once there is room", async () => {
    const t = await server.tenant({ rateLimitPerMinute: 1_000 });
    const before = await leftovers();
    const free = await fill(disk.files);
    const submitted = await t.call("POST", `/v1/run/${D}`, {
      input: { prompt: fast("on a full disk"), image_urls: ["https://example.com/ref.png"], duration: "4s" },
    });
    expect(submitted.status).toBe(201);
    const runId = submitted.body.run_id as string;
    const handedBack = () =>
      logs
        .errors()
        .filter(
          (line) => line.runId === runId && line.msg === "the disk is full; the run goes back to the queue",
        );
    // Until the worker says it gave the run back, or the run ended (failed, before this was fixed).
    const seen = await eventually(
      async () => {
        if (handedBack().length > 0) return "handed back";
        const run = await t.call("GET", `/v1/runs/${runId}`);
        return run.body.status === "queued" || run.body.status === "processing" ? undefined : run.body;
      },
      30_000,
      "the run to find the disk full",
    );
    expect(seen).toBe("handed back");
    expect(handedBack()[0]).toMatchObject({
      code: "ENOSPC",
      path: expect.stringMatching(new RegExp(`^${disk.files}/file_`)),
    });
    const meanwhile = await t.call("GET", `/v1/runs/${runId}`);
    expect(["queued", "processing"]).toContain(meanwhile.body.status);
    expect(meanwhile.body.error).toBeNull();
    expect(await leftovers()).toEqual(before);

    await free();
    const ended = await eventually(
      async () => {
        const run = await t.call("GET", `/v1/runs/${runId}`);
        return run.body.status === "queued" || run.body.status === "processing" ? undefined : run.body;
      },
      40_000,
      "the run to end once there is room",
    );
    expect(ended).toMatchObject({
      status: "succeeded",
      error: null,
      billing: { amount: expect.any(String) },
    });
    expect(Number(ended.billing.amount)).toBeGreaterThan(0);
  });
});

describe("a run's work directory on a full disk", () => {
  const disk = useSmallDisk();
  let work = "";
  let freeDisk: () => Promise<void>;
  let server: Server;
  let base = "";
  const body = Buffer.concat([Buffer.from([0, 0, 0, 24]), Buffer.from("ftypisom"), Buffer.alloc(256 * 1024)]);
  beforeAll(async () => {
    work = await mkdtemp(join(disk.files, "work-"));
    freeDisk = await fill(disk.files);
    server = createServer((_req, res) => res.writeHead(200, { "content-type": "video/mp4" }).end(body));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await freeDisk();
  });
  const signal = new AbortController().signal;
  /** A full disk, naming the file in the work directory it could not write. */
  const isFullDisk = (err: unknown) => {
    expect(storageFullOf(err), String(err)).toMatchObject({
      code: "ENOSPC",
      path: expect.stringMatching(new RegExp(`^${work}/`)),
    });
    return true;
  };

  it("is a full disk when a reference cannot be written, not a bad reference", async () => {
    const upload = `${base}/v1/files/upload_abcdefgh/content`;
    const slug = "lab-a/model-a/reference-to-video";
    const failure = await preflight(
      MODELS[slug],
      normalizeInput(slug, { prompt: "p", image_urls: [upload] }),
      {
        workDir: work,
        allowLocal: true,
        signal,
        openUpload: async () => ({ bytes: body.length, read: async () => Readable.from([body]) }),
      },
    ).catch((err: unknown) => err);
    expect(isFullDisk(failure)).toBe(true);
  });

  it("is a full disk when a vendor's video cannot be downloaded to it, not the vendor's failure", async () => {
    const failure = await fetchOutputVideo(`${base}/out.mp4`, {
      workDir: work,
      signal,
      allowLocal: true,
    }).catch((err: unknown) => err);
    expect(isFullDisk(failure)).toBe(true);
  });

  it("is a full disk when ffmpeg cannot write its output, naming the file", async () => {
    const output = join(work, "render.mp4");
    const failure = await ffmpeg(
      [
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=640x360:rate=24:duration=4",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        output,
      ],
      { timeoutMs: 60_000 },
    ).catch((err: unknown) => err);
    expect(isFullDisk(failure)).toBe(true);
    expect(storageFullOf(failure)?.path).toBe(output);
  });
});
