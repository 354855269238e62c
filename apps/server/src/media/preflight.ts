/**
 * Media preflight (issue: reference media): before a provider that uses the references is
 * called, each one is downloaded to the run's work directory (through the guarded fetcher, or from
 * the blob store for refvid's own uploads) and checked against the model's limits: format by magic
 * bytes, size, and for clips the duration from ffprobe, each and in total. A violation fails the run with `invalid_reference_media` (422), naming the URL and the
 * rule; it is never charged.
 */
import { createWriteStream } from "node:fs";
import { rename, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { assertNever, type ModelDefinition, type NormalizedRequest, RunFailure } from "@refvid/core";
import { FetchRefused, guardedFetch } from "../net/guarded-fetch.js";
import type { MinTransferRate } from "../net/rate-floor.js";
import { naming, storageFullOf } from "../storage-full.js";
import { probeDuration } from "./ffmpeg.js";
import { DEFAULT_FORMATS, DEFAULT_MAX_BYTES, formatBytes, KINDS } from "./limits.js";
import type { LocalReference } from "./local-reference.js";
import { matchesAllowed, sniffFile } from "./sniff.js";

/** A reference broke the model's limits; the run ends `failed` with type `invalid_reference_media`. */
export class InvalidReferenceMedia extends RunFailure {
  constructor(message: string) {
    super("invalid_reference_media", message);
  }
}

/** How long one reference may take to download, whatever its rate. */
export const REFERENCE_TIMEOUT_MS = 60_000;

/** Why a reference's download was refused, and what the client can do about it. */
function refusal(err: FetchRefused, sizeLimit: string): string {
  switch (err.reason) {
    case "too_large":
      return `is larger than ${sizeLimit}`;
    case "too_slow":
    case "timeout":
      return `could not be downloaded: ${err.message}; serve it faster, or upload it with POST /v1/files`;
    case "scheme":
    case "credentials":
    case "blocked_address":
    case "blocked_name":
    case "dns":
    case "redirects":
      return `could not be downloaded: ${err.message}`;
    default:
      return assertNever(err.reason);
  }
}

export interface PreflightOptions {
  workDir: string;
  allowLocal: boolean;
  signal: AbortSignal;
  /** Per download. */
  timeoutMs?: number;
  /** REFVID_MIN_DOWNLOAD_BYTES_PER_S over its window: a slower download is cut off (rate-floor.ts). */
  minRate?: MinTransferRate | null;
  /** Test hook passed on to the guarded fetcher. */
  allowAddresses?: ReadonlySet<string>;
  /**
   * A reference that is one of refvid's own uploads, read from the blob store instead of the
   * network: null when `url` is not one; throws, saying why, when the run may not use it.
   */
  openUpload?: (url: string) => Promise<{ bytes: number; read: () => Promise<Readable> } | null>;
}

export async function preflight(
  model: Pick<ModelDefinition, "media" | "referenceFields">,
  request: NormalizedRequest,
  options: PreflightOptions,
): Promise<LocalReference[]> {
  const found: LocalReference[] = [];
  for (const kind of KINDS) {
    const limits = model.media[kind];
    const formats = limits?.formats ?? DEFAULT_FORMATS[kind];
    const maxBytes = limits?.maxBytes ?? DEFAULT_MAX_BYTES[kind];
    const field = model.referenceFields[kind] ?? kind;
    let total = 0;
    for (const [index, url] of request.references[kind].entries()) {
      const where = `input.${field}[${index}] (${url})`;
      const fail = (rule: string) => new InvalidReferenceMedia(`${where} ${rule}`);
      const download = join(options.workDir, `ref-${kind}-${index}.download`);
      let bytes: number;
      try {
        const upload = await options.openUpload?.(url);
        if (upload) {
          if (upload.bytes > maxBytes)
            throw fail(`is larger than ${formatBytes(maxBytes)}, the limit for ${kind}s`);
          await pipeline(await upload.read(), createWriteStream(download), { signal: options.signal }).catch(
            (err: unknown) => {
              throw naming(err, download);
            },
          );
        } else {
          const res = await guardedFetch(
            url,
            {},
            {
              allowLocal: options.allowLocal,
              timeoutMs: options.timeoutMs ?? REFERENCE_TIMEOUT_MS,
              minRate: options.minRate ?? null,
              maxBytes,
              maxRedirects: 5,
              signal: options.signal,
              toFile: download,
              ...(options.allowAddresses ? { allowAddresses: options.allowAddresses } : {}),
            },
          );
          if (res.status !== 200) throw fail(`could not be downloaded: HTTP ${res.status}`);
        }
        bytes = (await stat(download)).size;
      } catch (err) {
        // Not the reference's fault: a full disk here is refvid's, and the run goes back to the queue.
        if (err instanceof InvalidReferenceMedia || storageFullOf(err)) throw err;
        if (err instanceof FetchRefused) {
          throw fail(refusal(err, `${formatBytes(maxBytes)}, the limit for ${kind}s`));
        }
        if (options.signal.aborted) throw err;
        throw fail(`could not be downloaded: ${(err as Error).message}`);
      }
      const format = await sniffFile(download);
      if (!format || !matchesAllowed(format, formats)) {
        throw fail(
          `is ${format ? format.toUpperCase() : "not a recognised media file"}; ${field} takes ${formats.map((f) => f.toUpperCase()).join(", ")}`,
        );
      }
      const path = join(options.workDir, `ref-${kind}-${index}.${format}`);
      await rename(download, path);
      const local: LocalReference = { kind, url, path, format, bytes };
      if (kind !== "image") {
        const seconds = await probeDuration(path, { timeoutMs: 20_000, signal: options.signal }).catch(() => {
          throw fail(`cannot be read as ${kind}: it is corrupt or truncated`);
        });
        if (limits?.minSeconds !== undefined && seconds < limits.minSeconds) {
          throw fail(
            `lasts ${seconds.toFixed(1)} s; each ${kind} clip must last ${limits.minSeconds} to ${limits.maxSeconds} s`,
          );
        }
        if (limits?.maxSeconds !== undefined && seconds > limits.maxSeconds) {
          throw fail(
            `lasts ${seconds.toFixed(1)} s; each ${kind} clip must last ${limits.minSeconds} to ${limits.maxSeconds} s`,
          );
        }
        total += seconds;
        if (limits?.maxTotalSeconds !== undefined && total > limits.maxTotalSeconds + 1e-9) {
          throw fail(
            `brings the ${kind} clips to ${total.toFixed(1)} s; together they may last at most ${limits.maxTotalSeconds} s`,
          );
        }
        local.durationSeconds = seconds;
      }
      found.push(local);
    }
  }
  return found;
}
