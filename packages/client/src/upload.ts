/**
 * What `uploadFile` sends: the file's bytes as the raw body of `POST /v1/files`, with its media
 * type in `Content-Type` and its name in `Content-Disposition`. The body is handed to fetch as
 * it is, so a Blob (a browser `File`, or a file on disk from `fileFromPath`) streams from where
 * it lives instead of being read into memory first.
 */
import type { UploadBody, UploadOptions } from "./client-types.js";

const DEFAULT_CONTENT_TYPE = "application/octet-stream";

function isBlob(value: unknown): value is Blob {
  return typeof Blob !== "undefined" && value instanceof Blob;
}

/** A `File`'s name (duck-typed, so that a File of another realm or a polyfill counts too). */
function nameOf(file: Blob): string | undefined {
  const name = (file as { name?: unknown }).name;
  return typeof name === "string" && name !== "" ? name : undefined;
}

/** RFC 8187 `ext-value` characters: what `encodeURIComponent` leaves alone, except `'()*`. */
function percentEncode(value: string): string {
  return encodeURIComponent(value).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/**
 * `attachment; filename="…"` for `fileName` (RFC 6266). A name that is not plain printable ASCII
 * gets an ASCII stand-in in `filename` (accents dropped, anything else `_`), which every server
 * reads, and itself, UTF-8 and percent-encoded, in `filename*`, for servers that read that.
 */
export function contentDisposition(fileName: string): string {
  const fallback = fileName
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\x20-\x7e]|["\\]/gu, "_");
  if (fallback === fileName) return `attachment; filename="${fileName}"`;
  return `attachment; filename="${fallback}"; filename*=UTF-8''${percentEncode(fileName)}`;
}

/**
 * The openapi-fetch options of an upload of `file`: the raw bytes, as they are, with their type
 * and name in the headers.
 *
 * @throws {TypeError} when `file` is not a Blob, an ArrayBuffer or a view of one (a path, say).
 */
export function uploadRequest(file: UploadBody, options: Pick<UploadOptions, "fileName" | "contentType">) {
  const blob = isBlob(file) ? file : undefined;
  if (!blob && !(file instanceof ArrayBuffer) && !ArrayBuffer.isView(file)) {
    const what =
      typeof file === "string"
        ? "a string (in Node, pass fileFromPath(path) from @refvid/client/node)"
        : typeof file;
    throw new TypeError(
      `uploadFile takes the file's bytes: a Blob or File, an ArrayBuffer or a typed array, not ${what}`,
    );
  }
  const headers: Record<string, string> = {
    "Content-Type": options.contentType || blob?.type || DEFAULT_CONTENT_TYPE,
  };
  const fileName = options.fileName ?? (blob ? nameOf(blob) : undefined);
  if (fileName) headers["Content-Disposition"] = contentDisposition(fileName);
  return {
    // The operation's generated body type knows only strings and forms; fetch takes the bytes.
    body: file as never,
    bodySerializer: (body: unknown) => body,
    headers,
    // Following a redirect would make Node's fetch (undici) tee the body to replay it, keeping a
    // copy of every byte sent until the response: a 200 MB upload would take 200 MB of memory.
    redirect: "error" as const,
  };
}
