/**
 * The references of a `/v1/videos` request: `input_reference` (an uploaded file, `{file_id}` of an
 * upload, or `{image_url}`: an `http(s)` URL or a `data:` URL) and OpenRouter's `input_references`
 * (`{type: "image_url", image_url: {url}}`, and `video_url`, `audio_url`). A `data:` URL is
 * stored as an upload of the caller, as `POST /v1/files` would store it; a run then reads it as
 * any upload.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import type { FileUpload } from "@refvid/api-types";
import { InvalidRequestError, NotFoundError, type ReferenceKind } from "@refvid/core";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { uploadUrl } from "../files/upload-urls.js";
import { storeUpload } from "./upload-file.js";
import { uploadRoom } from "./upload-quota.js";
import type { VideoParams, VideoReference } from "./video-request.js";

const problem = (field: string, message: string) =>
  new InvalidRequestError([{ field, message, rule: "type" }]);

const KINDS: Record<string, ReferenceKind> = { image_url: "image", video_url: "video", audio_url: "audio" };

/** The kind of reference an upload's media type is. */
const kindOf = (contentType: string): ReferenceKind =>
  contentType.startsWith("video/") ? "video" : contentType.startsWith("audio/") ? "audio" : "image";

/**
 * An upload a request made of its own content (a form's file, a `data:` URL): deleted when the
 * request makes no video, and named by its content's SHA-256 in the request's Idempotency-Key
 * hash, so that a retry sending the same bytes is the same request.
 */
export interface MadeUpload {
  fileId: string;
  url: string;
  sha256: string;
}

/** Reads the request's fields (a form's or JSON's) into the surface's parameters. */
export async function videoParams(
  deps: AppDeps,
  caller: Caller,
  fields: Record<string, unknown>,
  file: FileUpload | null,
  made: MadeUpload[],
): Promise<VideoParams> {
  const ctx = { deps, caller, made };
  const prompt = fields.prompt;
  if (typeof prompt !== "string" || prompt.length === 0)
    throw problem("prompt", "is required: a non-empty string");
  const text = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined || value === null) return undefined;
    if (typeof value === "number" && name === "seconds") return String(value);
    if (typeof value !== "string") throw problem(name, "must be a string");
    return value;
  };
  const references: VideoReference[] = [];
  if (file) references.push({ kind: kindOf(file.content_type), url: file.url, param: "input_reference" });
  else if (fields.input_reference !== undefined) {
    references.push(await inputReference(ctx, fields.input_reference));
  }
  const list = fields.input_references;
  if (list !== undefined) {
    if (!Array.isArray(list)) throw problem("input_references", "must be an array");
    for (const [i, item] of list.entries()) references.push(await listedReference(ctx, item, i));
  }
  const model = text("model");
  const seconds = text("seconds");
  const size = text("size");
  return {
    prompt,
    references,
    ...(model !== undefined ? { model } : {}),
    ...(seconds !== undefined ? { seconds } : {}),
    ...(size !== undefined ? { size } : {}),
  };
}

/** What reading the references needs, and the uploads this request made (deleted if it fails). */
interface ReferenceContext {
  deps: AppDeps;
  caller: Caller;
  made: MadeUpload[];
}

async function inputReference(ctx: ReferenceContext, value: unknown): Promise<VideoReference> {
  const { deps, caller } = ctx;
  const param = "input_reference";
  if (typeof value === "string") return { kind: "image", url: await urlOf(ctx, value, param), param };
  if (typeof value !== "object" || value === null)
    throw problem(param, "must be a file, {file_id} or {image_url}");
  const { file_id: fileId, image_url: imageUrl } = value as Record<string, unknown>;
  if (typeof fileId === "string") {
    const upload = await deps.store.getUpload({
      organizationId: caller.organization.id,
      environment: caller.apiKey.environment,
      id: fileId,
    });
    if (!upload)
      throw new NotFoundError(
        "file_not_found",
        `input_reference.file_id: no upload ${fileId} in this organization.`,
      );
    return { kind: kindOf(upload.contentType), url: uploadUrl(deps.config.publicUrl, upload.id), param };
  }
  if (typeof imageUrl === "string") return { kind: "image", url: await urlOf(ctx, imageUrl, param), param };
  throw problem(param, "must be a file, {file_id} or {image_url}");
}

async function listedReference(ctx: ReferenceContext, item: unknown, i: number): Promise<VideoReference> {
  const param = "input_references";
  const at = `${param}.${i}`;
  const type = (item as { type?: unknown } | null)?.type;
  const kind = typeof type === "string" && Object.hasOwn(KINDS, type) ? KINDS[type] : undefined;
  if (!kind) throw problem(`${at}.type`, "must be image_url, video_url or audio_url");
  const holder = (item as Record<string, unknown>)[type as string];
  const url = typeof holder === "string" ? holder : (holder as { url?: unknown } | null)?.url;
  if (typeof url !== "string") throw problem(`${at}.${type as string}.url`, "is required");
  return { kind, url: await urlOf(ctx, url, param), param };
}

/** The URL a reference is read from: a `data:` URL becomes an upload of the caller's. */
async function urlOf({ deps, caller, made }: ReferenceContext, url: string, param: string): Promise<string> {
  if (!url.startsWith("data:")) return url;
  const match = /^data:([^,;]*)((?:;[^,;]*)*?)(;base64)?,(.*)$/s.exec(url);
  if (!match) throw problem(param, "is not a valid data: URL");
  const bytes = dataBytes(match[4] ?? "", match[3] !== undefined);
  if (!bytes) throw problem(param, "is not a valid data: URL (its percent-encoding is broken)");
  const room = await uploadRoom(deps, caller.organization.id, bytes.length);
  const upload = await storeUpload(deps, caller, Readable.from([bytes]), null, room);
  made.push({
    fileId: upload.file_id,
    url: upload.url,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
  return upload.url;
}

/** A `data:` URL's bytes; null when its percent-encoding cannot be read. */
function dataBytes(data: string, base64: boolean): Buffer | null {
  if (base64) return Buffer.from(data, "base64");
  try {
    return Buffer.from(decodeURIComponent(data), "latin1");
  } catch {
    return null;
  }
}

/**
 * Deletes the uploads a request made (a form's file, its `data:` URLs) when it made no video: a
 * refused create, or a retry answered with the video its Idempotency-Key made before, leaves
 * nothing counted against the organization's upload quota.
 */
export async function forgetUploads(
  deps: AppDeps,
  caller: Caller,
  made: readonly MadeUpload[],
): Promise<void> {
  for (const { fileId: id } of made) {
    const scope = { organizationId: caller.organization.id, environment: caller.apiKey.environment, id };
    await deps.store
      .deleteUpload(scope)
      .then(() => deps.blobs.delete(id))
      .catch((err: unknown) =>
        deps.logger.warn({ err, id }, "could not delete an upload of a request that made no video"),
      );
  }
}
