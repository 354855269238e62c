/**
 * Storing a reference upload (`POST /v1/files`): the bytes stream into the blob store as they
 * arrive, held to the largest size any model takes for their kind. The kind and the media type
 * come from the first bytes (magic numbers), never from what the client declares, so the file is
 * served back only as the image, video or audio it is. A body over its cap is cut off and nothing
 * of it is kept; the record is written only once the bytes are stored.
 */
import { Readable, Transform } from "node:stream";
import type { FileUpload } from "@refvid/api-types";
import { RefvidError, UnsupportedMediaTypeError } from "@refvid/core";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { uploadUrl } from "../files/upload-urls.js";
import { newUploadId } from "../ids.js";
import { DEFAULT_FORMATS, FORMAT_TYPES, formatBytes, UPLOAD_MAX_BYTES } from "../media/limits.js";
import { SNIFF_BYTES, sniffFormat } from "../media/sniff.js";

export class UploadTooLargeError extends RefvidError {
  readonly status = 413;
  readonly type = "payload_too_large";
}

const ACCEPTED = [...DEFAULT_FORMATS.image, ...DEFAULT_FORMATS.video, ...DEFAULT_FORMATS.audio]
  .map((format) => format.toUpperCase())
  .join(", ");

export async function storeUpload(
  deps: AppDeps,
  caller: Caller,
  body: Readable,
  fileName: string | null,
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
  const id = newUploadId();
  const stored = await deps.blobs.put(id, capped(head, rest, maxBytes, kind), { contentType });
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
  try {
    await deps.store.createUpload(record);
  } catch (err) {
    await deps.blobs.delete(id).catch(() => {});
    throw err;
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

/** `head` then `rest`, failing with 413 the moment the total passes `maxBytes`. */
function capped(head: Buffer, rest: Readable, maxBytes: number, kind: string): Readable {
  let total = 0;
  const cap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      total += chunk.length;
      if (total > maxBytes) {
        done(
          new UploadTooLargeError(
            `file: is larger than ${formatBytes(maxBytes)} (${maxBytes} bytes), the most any model takes for ${kind} references.`,
          ),
        );
        return;
      }
      done(null, chunk);
    },
  });
  rest.on("error", (err) => cap.destroy(err));
  cap.write(head);
  rest.pipe(cap);
  return cap;
}
