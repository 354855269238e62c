/**
 * The BlobStore port: where generated videos and uploaded reference files are kept, by id.
 * Adapters: a local directory (`local-blob-store.ts`) and any S3-compatible bucket
 * (`s3-blob-store.ts`). Every adapter runs the contract suite (`blob-store.contract.ts`).
 */
import type { Readable } from "node:stream";

/** Generated videos are `file_…`; reference uploads are `upload_…`. Their retention differs. */
export type BlobKind = "file" | "upload";

export interface BlobInfo {
  size: number;
  contentType: string;
}

export interface ByteRange {
  /** First byte, inclusive. */
  start: number;
  /** Last byte, inclusive. */
  end: number;
}

export interface BlobStore {
  /**
   * Stores a blob under `id`: a file path is moved in (the source is gone afterwards), a stream is
   * copied as it arrives. A put that fails, or whose stream errors, keeps nothing.
   */
  put(id: string, source: string | Readable, options?: { contentType?: string }): Promise<BlobInfo>;
  /** Null for an unknown id, or one that is not a valid id at all. */
  stat(id: string): Promise<BlobInfo | null>;
  /** The blob's bytes, whole or one range; rejects when there is no such blob. */
  read(id: string, range?: ByteRange): Promise<Readable>;
  delete(id: string): Promise<void>;
  /** Deletes the blobs of one kind stored before `before`; returns how many. */
  deleteOlderThan(kind: BlobKind, before: Date): Promise<number>;
  /** Releases what the adapter holds open (an S3 client's sockets), at shutdown. */
  close?(): void;
}

const SAFE_ID = /^(file|upload)_[A-Za-z0-9_-]{8,100}$/;

/** The kind of a well-formed id, or null: ids are checked before they name a path or a key. */
export function blobKind(id: string): BlobKind | null {
  const match = SAFE_ID.exec(id);
  return match ? (match[1] as BlobKind) : null;
}

/** Throws for an id that could name something outside the store. */
export function checkedBlobId(id: string): string {
  if (!blobKind(id)) throw new RangeError(`invalid blob id: ${id}`);
  return id;
}

/** What generated videos are served as when no type was stored with them. */
export const DEFAULT_CONTENT_TYPE = "video/mp4";
