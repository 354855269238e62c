/**
 * Local files as references. A value of `--image`, `--video` or `--audio` (or of a reference
 * field in `--input`) that is not a URL is the path of a file on this machine: it is checked
 * before any request, stands in the input as a placeholder URL while the input is checked and
 * priced (a price depends on which kinds of reference are given, never on the files), and is
 * uploaded (`POST /v1/files`) only once the run is to be submitted, its upload's URL taking the
 * placeholder's place.
 */
import { fileURLToPath } from "node:url";
import type { FileUpload, Model, RefvidClient } from "@refvid/client";
import { fileFromPath } from "@refvid/client/node";
import { UsageError } from "./errors.js";
import type { Output } from "./io.js";

/** A file named as a reference, and what stands for it in the input until it is uploaded. */
export interface LocalFile {
  /** The path as given (a `file:` URL's path). */
  path: string;
  /** The flag it was given with, for messages. */
  flag: string;
  placeholder: string;
}

/** Any `scheme://`: a URL, left for the model's schema to judge (which takes http and https). */
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const PLACEHOLDER = "https://local-file.invalid/";

/**
 * Maps each value of a reference field of `input` through `replace`: a list's items, or the one
 * URL of a field that takes one (a catalog model's may).
 */
function replaceReferences(
  input: Record<string, unknown>,
  field: string,
  replace: (value: unknown) => unknown,
): void {
  const value = input[field];
  if (Array.isArray(value)) input[field] = value.map(replace);
  else if (typeof value === "string") input[field] = replace(value);
}

/** The path `value` names, or `undefined` when it is a URL. A `file:` URL is a path too. */
export function localPath(value: string): string | undefined {
  if (/^file:/i.test(value)) {
    try {
      return fileURLToPath(value);
    } catch (error) {
      throw new UsageError(`${value} is not a file URL this system can open: ${(error as Error).message}`);
    }
  }
  return URL_LIKE.test(value) ? undefined : value;
}

/**
 * Replaces each local path in the reference fields of `input` by a placeholder URL (the same
 * path twice by the same one), and returns the files. `flagOf` names a field's flag.
 */
export function placeLocalFiles(
  model: Model,
  input: Record<string, unknown>,
  flagOf: (field: string) => string,
): LocalFile[] {
  const files = new Map<string, LocalFile>();
  for (const { field } of model.limits.references) {
    const place = (value: unknown) => {
      const path = typeof value === "string" ? localPath(value) : undefined;
      if (path === undefined) return value;
      let file = files.get(path);
      if (!file) {
        file = { path, flag: flagOf(field), placeholder: `${PLACEHOLDER}${files.size + 1}` };
        files.set(path, file);
      }
      return file.placeholder;
    };
    replaceReferences(input, field, place);
  }
  return [...files.values()];
}

/** The file at `path`, or a usage error naming its flag and saying why it cannot be read. */
function openLocalFile({ path, flag }: Pick<LocalFile, "path" | "flag">): Promise<File> {
  return fileFromPath(path).catch((error: Error & { code?: string }) => {
    throw new UsageError(
      `${flag ? `${flag} ` : ""}${path}: ${
        error.code === "ENOENT" || error.code === "ENOTDIR"
          ? "no such file (a reference is an http:// or https:// URL, or the path of a file to upload)"
          : error.message.replace(`cannot read ${path}: `, "")
      }`,
    );
  });
}

/** A usage error unless each file exists and can be read. */
export async function checkLocalFiles(files: readonly Pick<LocalFile, "path" | "flag">[]): Promise<void> {
  for (const file of files) await openLocalFile(file);
}

/** `183 KB`: sizes in powers of 1000, as the sizes of files are usually told. */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (Math.round(bytes / 1000) < 1000) return `${Math.round(bytes / 1000)} KB`;
  if (bytes < 1e9) return `${(bytes / 1e6).toFixed(1)} MB`;
  return `${(bytes / 1e9).toFixed(2)} GB`;
}

/** Uploads the file at `path` (streamed from disk), saying so on stderr. */
export async function uploadLocalFile(
  client: RefvidClient,
  file: Pick<LocalFile, "path" | "flag">,
  io: Output,
): Promise<FileUpload> {
  // Checked before the price was shown, but it may be gone or changed since.
  const upload = await client.uploadFile(await openLocalFile(file));
  io.info(`Uploaded ${file.path} (${formatSize(upload.bytes)}) as ${upload.file_id}`);
  return upload;
}

/** Uploads each file and puts its upload's URL where its placeholder stands in `input`. */
export async function uploadLocalFiles(
  client: RefvidClient,
  model: Model,
  input: Record<string, unknown>,
  files: readonly LocalFile[],
  io: Output,
): Promise<void> {
  const urls = new Map<unknown, string>();
  for (const file of files) urls.set(file.placeholder, (await uploadLocalFile(client, file, io)).url);
  for (const { field } of model.limits.references) {
    replaceReferences(input, field, (value) => urls.get(value) ?? value);
  }
}
