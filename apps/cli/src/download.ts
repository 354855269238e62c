/** Saving a run's video: streamed to `<file>.part`, renamed into place once complete. */
import { createWriteStream } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { errorFromResponse, type Run } from "@refvid/client";
import { EXIT_RUN_FAILED } from "./errors.js";
import { videoUrl } from "./format.js";
import type { Output } from "./io.js";

export interface Saved {
  path: string;
  bytes: number;
}

/** Downloads `url` (a signed file URL: no credentials needed) to `path`. */
export async function downloadFile(url: string, path: string): Promise<Saved> {
  const response = await fetch(url);
  if (!response.ok || !response.body) {
    const text = await response.text().catch(() => "");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw errorFromResponse(response, body);
  }
  const partial = `${path}.part`;
  let bytes = 0;
  const counted = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>).on(
    "data",
    (chunk: Buffer) => {
      bytes += chunk.length;
    },
  );
  try {
    await pipeline(counted, createWriteStream(partial));
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return { path, bytes };
}

/**
 * Saves a succeeded run's video to `file` (default `<run_id>.mp4`), saying so unless `--json`;
 * `undefined`, with the exit code set to 1, when the run has no video.
 */
export async function saveVideo(run: Run, file: string | true, io: Output): Promise<Saved | undefined> {
  const url = videoUrl(run);
  if (run.status !== "succeeded" || !url) {
    io.info(`${io.ce.red("error:")} ${run.run_id} is ${run.status}: there is no video to download`);
    process.exitCode = EXIT_RUN_FAILED;
    return undefined;
  }
  const saved = await downloadFile(url, file === true ? `${run.run_id}.mp4` : file);
  if (!io.json) io.print(`Saved ${saved.path} (${(saved.bytes / 1024 / 1024).toFixed(2)} MB)`);
  return saved;
}
