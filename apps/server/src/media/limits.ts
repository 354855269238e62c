/**
 * Size and format limits for reference files where a model gives none, and the largest each kind
 * may be for any model: what an upload (`POST /v1/files`) is held to while it streams in.
 */
import { MODELS, type ReferenceKind } from "@refvid/core";
import type { MediaFormat } from "./sniff.js";

const MB = 1024 * 1024;

export const KINDS: readonly ReferenceKind[] = ["image", "video", "audio"];

/** Caps for kinds a model gives no size for, so a download cannot fill the disk. */
export const DEFAULT_MAX_BYTES: Record<ReferenceKind, number> = {
  image: 30 * MB,
  video: 200 * MB,
  audio: 100 * MB,
};

export const DEFAULT_FORMATS: Record<ReferenceKind, readonly MediaFormat[]> = {
  image: ["jpeg", "png", "webp", "bmp", "tiff", "gif", "heic", "heif"],
  video: ["mp4", "mov"],
  audio: ["mp3", "wav"],
};

/** What each format is, and the media type it is served as. */
export const FORMAT_TYPES: Record<MediaFormat, { kind: ReferenceKind; contentType: string }> = {
  jpeg: { kind: "image", contentType: "image/jpeg" },
  png: { kind: "image", contentType: "image/png" },
  webp: { kind: "image", contentType: "image/webp" },
  bmp: { kind: "image", contentType: "image/bmp" },
  tiff: { kind: "image", contentType: "image/tiff" },
  gif: { kind: "image", contentType: "image/gif" },
  heic: { kind: "image", contentType: "image/heic" },
  heif: { kind: "image", contentType: "image/heif" },
  mp4: { kind: "video", contentType: "video/mp4" },
  mov: { kind: "video", contentType: "video/quicktime" },
  mp3: { kind: "audio", contentType: "audio/mpeg" },
  wav: { kind: "audio", contentType: "audio/wav" },
};

/** The largest file of each kind that some model accepts. */
export const UPLOAD_MAX_BYTES: Record<ReferenceKind, number> = Object.fromEntries(
  KINDS.map((kind) => [
    kind,
    Math.max(
      ...Object.values(MODELS).map((model) =>
        model.referenceFields[kind] ? (model.media[kind]?.maxBytes ?? DEFAULT_MAX_BYTES[kind]) : 0,
      ),
    ),
  ]),
) as Record<ReferenceKind, number>;

/** The largest upload of any kind: a body announced bigger is refused before it is read. */
export const MAX_UPLOAD_BYTES = Math.max(...Object.values(UPLOAD_MAX_BYTES));

export const formatBytes = (n: number) => `${Math.round(n / MB)} MB`;
