/**
 * Storing a reference upload (`POST /v1/files`): the bytes stream into the blob store as they
 * arrive, held to the largest size any model takes for their kind. The kind and the media type
 * come from the first bytes (magic numbers), never from what the client declares, so the file is
 * served back only as the image, video or audio it is. A body over its cap, or over what the
 * organization's upload quota leaves, is cut off and nothing of it is kept; the record is written
 * only once the bytes are stored, and only if the quota still has room for it then.
 */
import { Readable, Transform } from "node:stream";
import type { FileUpload } from "@refvid/api-types";
import {
  RefvidError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  UploadQuotaExceededError,
} from "@refvid/core";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { uploadUrl } from "../files/upload-urls.js";
import { newUploadId } from "../ids.js";
import { DEFAULT_FORMATS, FORMAT_TYPES, formatBytes, UPLOAD_MAX_BYTES } from "../media/limits.js";
import { SNIFF_BYTES, sniffFormat } from "../media/sniff.js";
import type { UploadRoom } from "./upload-quota.js";

export class UploadTooLargeError extends RefvidError {
  readonly status = 413;
  readonly type = "payload_too_large";
}

const ACCEPTED = [...DEFAULT_FORMATS.image, ...DEFAULT_FORMATS.video, ...DEFAULT_FORMATS.audio]
  .map((format) => format.toUpperCase())
  .join(", ");

/**
 * Stores the body as the caller's upload, within `room` (upload-quota.ts): cut off with 413 as soon
 * as it passes its kind's cap or the bytes left of the quota, and recorded only if it still fits
 * the quota then (another upload may have taken the room meanwhile); nothing is kept otherwise.
 */
export async function storeUpload(
  deps: AppDeps,
  caller: Caller,
  body: Readable,
  fileName: string | null,
  room: UploadRoom,
): Promise<FileUpload> {
  const { head, rest } = await readHead(body, SNIFF_BYTES);
  const format = sniffFormat(head);
  if (!format) {
    throw new UnsupportedMediaTypeError(
      `file: ${head.length === 0 ? "is empty" : "is not an image, video or audio file refvid reads"}; upload ${ACCEPTED}.`,
    );
  }
  const { kind, contentType } = FORMAT_TYPES[format];
  const maxBytes = UPLOAD_MAX_BYTES[kind];
  const source =
    room.bytesLeft < maxBytes
      ? capped(
          head,
          rest,
          room.bytesLeft,
          () => new UploadQuotaExceededError("bytes", room.usage.bytes, room.quota.bytes),
        )
      : capped(
          head,
          rest,
          maxBytes,
          () =>
            new UploadTooLargeError(
              `file: is larger than ${formatBytes(maxBytes)} (${maxBytes} bytes), the most any model takes for ${kind} references.`,
            ),
        );
  const id = newUploadId();
  const stored = await deps.blobs.put(id, source, { contentType });
  const now = deps.clock.now();
  const record = {
    id,
    organizationId: caller.organization.id,
    apiKeyId: caller.apiKey.id,
    environment: caller.apiKey.environment,
    contentType,
    bytes: stored.size,
    fileName,
    createdAt: now,
    expiresAt: new Date(now.getTime() + deps.config.uploadTtlHours * 3_600_000),
  };
  const created = await deps.store
    .createUpload(record, deps.config.uploadQuota)
    .catch(async (err: unknown) => {
      await deps.blobs.delete(id).catch(() => {});
      throw err;
    });
  if (created.kind !== "created") {
    await deps.blobs.delete(id).catch(() => {});
    if (created.kind === "organization_gone")
      throw new UnauthorizedError("This API key's organization no longer exists.");
    const { quota, used, limit } = created.decision;
    throw new UploadQuotaExceededError(quota, used, limit);
  }
  return {
    file_id: id,
    url: uploadUrl(deps.config.publicUrl, id),
    content_type: contentType,
    bytes: stored.size,
    file_name: fileName,
    created_at: now.toISOString(),
    expires_at: record.expiresAt.toISOString(),
  };
}

/** The first `size` bytes (fewer if the stream is shorter), and the stream from where they end. */
async function readHead(body: Readable, size: number): Promise<{ head: Buffer; rest: Readable }> {
  const chunks: Buffer[] = [];
  let length = 0;
  const iterator = body[Symbol.asyncIterator]();
  while (length < size) {
    const next = await iterator.next();
    if (next.done) break;
    const chunk = Buffer.from(next.value as Buffer);
    chunks.push(chunk);
    length += chunk.length;
  }
  const all = Buffer.concat(chunks);
  const rest = Readable.from(
    (async function* () {
      if (all.length > size) yield all.subarray(size);
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value as Buffer;
      }
    })(),
  );
  return { head: all.subarray(0, size), rest };
}

/** `head` then `rest`, failing with `tooLarge()` (a 413) the moment the total passes `maxBytes`. */
function capped(head: Buffer, rest: Readable, maxBytes: number, tooLarge: () => Error): Readable {
  let total = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > maxBytes) {
        done(tooLarge());
        return;
      }
      done(null, chunk);
    },
  });
  rest.on("error", (err) => cap.destroy(err));
  // A small cap (what a quota leaves) may pass before the blob store begins to read: the store's
  // pipeline still sees the error (the stream is `errored`), and it is not thrown meanwhile.
  cap.on("error", () => {});
  cap.write(head);
  rest.pipe(cap);
  return cap;
}
