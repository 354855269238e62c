/**
 * @refvid/client/node: helpers that need Node's file system, kept out of the main entry so that
 * `@refvid/client` itself still runs in browsers, Deno, Bun and edge runtimes.
 *
 * @example
 * import { createRefvidClient } from "@refvid/client";
 * import { fileFromPath } from "@refvid/client/node";
 *
 * const refvid = createRefvidClient();
 * const upload = await refvid.uploadFile(await fileFromPath("./sculpture.png"));
 * await refvid.run("lab-d/model-d/reference-to-video", { prompt: "…", image_urls: [upload.url] });
 */
import { constants, openAsBlob } from "node:fs";
import { access, stat } from "node:fs/promises";
import { basename, extname } from "node:path";

/** Media types of the file extensions refvid takes, for a file's `type`. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".png": "image/png",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".tif": "image/tiff",
  ".tiff": "image/tiff",
  ".gif": "image/gif",
  ".heic": "image/heic",
  ".heif": "image/heif",
  ".mp4": "video/mp4",
  ".mov": "video/quicktime",
  ".mp3": "audio/mpeg",
  ".wav": "audio/wav",
};

/** The media type of `path` by its extension (any case); `application/octet-stream` for others. */
export function contentTypeOf(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
}

/** Options for {@link fileFromPath}. */
export interface FileFromPathOptions {
  /** The file's `type`. Default: from the extension ({@link contentTypeOf}). */
  contentType?: string;
}

/** An error of `fs` for `path`, said plainly, keeping Node's `code` and the original as `cause`. */
function fileError(path: string, error: unknown): Error {
  const code = (error as { code?: unknown } | null)?.code;
  const reason =
    code === "ENOENT" || code === "ENOTDIR"
      ? "no such file"
      : code === "EACCES" || code === "EPERM"
        ? "permission denied"
        : String((error as Error)?.message ?? error);
  return Object.assign(new Error(`cannot read ${path}: ${reason}`, { cause: error }), { code, path });
}

/**
 * A `File` of the file at `path`, named after its base name, for `refvid.uploadFile`. It is
 * backed by the file on disk (`fs.openAsBlob`): nothing is read until it is uploaded, and then
 * it streams, so a file of any size takes no more memory than a few chunks. The file must not
 * change until then (reading it fails if it does).
 *
 * @throws {Error} `cannot read <path>: no such file` (with `code` `ENOENT` and `path`) when there
 * is no file at `path`, `…: not a file` for a directory, and likewise when it cannot be read.
 */
export async function fileFromPath(path: string, options: FileFromPathOptions = {}): Promise<File> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (error) {
    throw fileError(path, error);
  }
  if (!info.isFile()) {
    const code = info.isDirectory() ? "EISDIR" : undefined;
    throw Object.assign(new Error(`cannot read ${path}: not a file`), { code, path });
  }
  const type = options.contentType ?? contentTypeOf(path);
  let blob: Blob;
  try {
    // openAsBlob only stats the file; an unreadable one would fail in the middle of its upload.
    await access(path, constants.R_OK);
    blob = await openAsBlob(path, { type });
  } catch (error) {
    throw fileError(path, error);
  }
  // A File over the Blob refers to the same bytes on disk; it copies nothing.
  return new File([blob], basename(path), { type, lastModified: Math.trunc(info.mtimeMs) });
}
