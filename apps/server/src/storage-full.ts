/**
 * A full disk (`ENOSPC`) or a spent disk quota (`EDQUOT`) while writing an upload, a generated
 * video or a temporary file (docs/decisions.md, "Files and object storage"): the request that hit
 * it answers `503 service_unavailable` with `Retry-After`, and a run that hit it goes back to the
 * queue; never a 500, never a run failed `internal_error`.
 */
import { RefvidError } from "@refvid/core";

const CODES: ReadonlySet<string> = new Set(["ENOSPC", "EDQUOT"]);

/** What a full-disk error says: its code, and the path being written when the system said so. */
export interface StorageFull {
  code: string;
  path: string | null;
}

/**
 * The code of a full-disk error and the path it could not write, through its `cause`s (a wrapped
 * one is still a full disk); null for any other error.
 */
export function storageFullOf(err: unknown): StorageFull | null {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const { code, path, dest, cause } = current as Record<string, unknown>;
    if (typeof code === "string" && CODES.has(code)) {
      // A copy names the file it read as `path` and the one it wrote as `dest`.
      const written = typeof dest === "string" ? dest : path;
      return { code, path: typeof written === "string" ? written : null };
    }
    current = cause;
  }
  return null;
}

/**
 * 503 for a request whose bytes could not be written. Space comes back when an operator or the
 * retention sweep frees it, not in a second: clients are told to wait a minute, which also stops
 * @refvid/client (at most 20 s between retries) from resending a large body at once.
 */
export class StorageFullError extends RefvidError {
  readonly status = 503;
  readonly type = "service_unavailable";
  override readonly retryAfterSeconds = 60;
  constructor() {
    super(
      "refvid's storage is full, so nothing was kept. Retry in a minute or so; the operator has been alerted.",
    );
  }
}

/** The text ffmpeg writes (strerror) where the system said ENOSPC or EDQUOT. */
const FFMPEG_TEXT: readonly [RegExp, string][] = [
  [/No space left on device/i, "ENOSPC"],
  [/Disk quota exceeded/i, "EDQUOT"],
];

/** ffmpeg reports a full disk only in its output: the code it stands for, or null. */
export function storageFullCodeIn(text: string): string | null {
  return FFMPEG_TEXT.find(([pattern]) => pattern.test(text))?.[1] ?? null;
}

/**
 * `err`, naming `path` as the file it could not write when it is a full disk that names none: a
 * write to an open file fails without the file's name, and the log line must say where.
 */
export function naming<E>(err: E, path: string): E {
  const full = storageFullOf(err);
  if (full && full.path === null && err !== null && typeof err === "object") Object.assign(err, { path });
  return err;
}
