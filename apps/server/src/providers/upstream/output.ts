/**
 * A vendor's output video, brought home: streamed to disk through the guarded fetcher (or decoded from a
 * `data:` URL, as Cog may answer), checked to be an MP4 or MOV by its bytes, and probed for its
 * length, which is what the run is billed by. refvid then serves it from its own blob store.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { probeDuration } from "../../media/ffmpeg.js";
import { sniffFile } from "../../media/sniff.js";
import { FetchRefused, guardedFetch } from "../../net/guarded-fetch.js";
import type { MinTransferRate } from "../../net/rate-floor.js";
import { naming, storageFullOf } from "../../storage-full.js";
import {
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
  type VendorProviderOptions,
} from "../types.js";
import type { CompiledExpression } from "./mapping.js";

export interface OutputOptions {
  workDir: string;
  signal: AbortSignal;
  /** REFVID_ALLOW_LOCAL_URLS: output on loopback or private hosts (a Cog box, tests). */
  allowLocal: boolean;
  /** Largest video accepted. */
  maxBytes?: number;
  timeoutMs?: number;
  /** REFVID_MIN_DOWNLOAD_BYTES_PER_S over its window: a slower download is cut off. */
  minRate?: MinTransferRate | null;
  /** Test hook passed on to the guarded fetcher. */
  allowAddresses?: ReadonlySet<string>;
}

const DEFAULT_MAX_BYTES = 512 * 1024 * 1024;
const DATA_URL = /^data:([^;,]*)(;base64)?,/;

/**
 * Where the video is in a vendor's output: the route's `output` path (JSONata) when it has one,
 * else where the vendor type keeps it (`fallback`).
 */
export async function locateVideo(
  output: unknown,
  path: CompiledExpression | undefined,
  fallback: (output: unknown) => unknown,
): Promise<unknown> {
  if (!path) return fallback(output);
  try {
    return await path.evaluate(output);
  } catch (err) {
    throw new ProviderError(
      `The route's output path found no video in the model's output: ${(err as Error).message}`,
    );
  }
}

/**
 * What every vendor adapter does once its job succeeded: brings the video at `location` home
 * (`fetchOutputVideo`), and only then reports the run done (`onProgress(1)`).
 */
export async function finishWithOutputVideo(
  location: unknown,
  job: Pick<ProviderJob, "workDir">,
  context: Pick<ProviderContext, "signal" | "onProgress">,
  options: Pick<VendorProviderOptions, "allowLocalOutputs" | "minDownloadRate">,
): Promise<ProviderResult> {
  const result = await fetchOutputVideo(location, {
    workDir: job.workDir,
    signal: context.signal,
    allowLocal: options.allowLocalOutputs,
    minRate: options.minDownloadRate ?? null,
  });
  context.onProgress(1);
  return result;
}

/** Downloads (or decodes) the video at `location` into `workDir`, checks and probes it. */
export async function fetchOutputVideo(location: unknown, options: OutputOptions): Promise<ProviderResult> {
  if (typeof location !== "string" || location.length === 0) {
    throw new ProviderError("The model finished without a video.");
  }
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const path = join(options.workDir, "upstream-output.mp4");
  const data = DATA_URL.exec(location);
  if (data) {
    if (!data[2]) throw new ProviderError("The model's video came as a data: URL that is not base64.");
    const bytes = Buffer.from(location.slice(data[0].length), "base64");
    if (bytes.length > maxBytes)
      throw new ProviderError(`The model's video is larger than ${maxBytes} bytes.`);
    await writeFile(path, bytes).catch((err: unknown) => {
      throw naming(err, path);
    });
  } else {
    let url: URL;
    try {
      url = new URL(location);
    } catch {
      throw new ProviderError("The model's output is not a URL.");
    }
    try {
      // Streamed to disk as it arrives: a video is never held in memory whole.
      const response = await guardedFetch(
        url.toString(),
        { method: "GET" },
        {
          allowLocal: options.allowLocal,
          timeoutMs: options.timeoutMs ?? 300_000,
          minRate: options.minRate ?? null,
          maxBytes,
          maxRedirects: 5,
          signal: options.signal,
          toFile: path,
          ...(options.allowAddresses ? { allowAddresses: options.allowAddresses } : {}),
        },
      );
      if (response.status !== 200) {
        throw new ProviderError(`Downloading the model's video answered ${response.status}.`);
      }
    } catch (err) {
      if (options.signal.aborted) throw options.signal.reason;
      // A full disk is refvid's, not the vendor's: the run goes back to the queue.
      if (err instanceof ProviderError || storageFullOf(err)) throw err;
      const why = err instanceof FetchRefused ? err.message : "the download failed";
      throw new ProviderError(`Could not download the model's video: ${why}.`);
    }
  }
  const format = await sniffFile(path);
  if (format !== "mp4" && format !== "mov") {
    throw new ProviderError("The model's output is not an MP4 or MOV video.");
  }
  let durationSeconds: number;
  try {
    durationSeconds = await probeDuration(path, { timeoutMs: 30_000, signal: options.signal });
  } catch (_err) {
    if (options.signal.aborted) throw options.signal.reason;
    throw new ProviderError("The model's video cannot be read.");
  }
  return { path, durationSeconds };
}
