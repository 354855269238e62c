/**
 * BlobStore on an S3-compatible bucket (AWS S3, or a server at `REFVID_S3_ENDPOINT`), through
 * the AWS SDK v3. Puts stream through multipart uploads (`@aws-sdk/lib-storage`): a few parts in
 * memory at most, never a whole video; a failed upload is aborted, so nothing partial is kept.
 * Reads pass the byte range through to S3.
 */
import { createReadStream } from "node:fs";
import { rm } from "node:fs/promises";
import { pipeline, Readable, Transform } from "node:stream";
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import {
  type BlobInfo,
  type BlobKind,
  type BlobStore,
  type ByteRange,
  blobKind,
  checkedBlobId,
  DEFAULT_CONTENT_TYPE,
} from "./blob-store.js";
import type { S3Location } from "./s3-location.js";

/** Multipart part size: S3's minimum is 5 MiB; two parts in flight bound the memory a put takes. */
const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 2;
const DELETES_IN_FLIGHT = 8;

export class S3BlobStore implements BlobStore {
  readonly client: S3Client;

  constructor(readonly location: S3Location) {
    this.client = new S3Client({
      region: location.region,
      ...(location.endpoint ? { endpoint: location.endpoint } : {}),
      forcePathStyle: location.forcePathStyle,
      ...(location.credentials ? { credentials: location.credentials } : {}),
      // Checksums only where S3 requires them: S3-compatible servers do not all take the
      // CRC32 trailers that newer SDKs send by default.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  /**
   * Creates the bucket when it does not exist (`refvid migrate`); true when it made it. A bucket
   * that exists is left as it is, whoever owns it: access to it shows at the first put.
   */
  async ensureBucket(): Promise<boolean> {
    const Bucket = this.location.bucket;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket }));
      return false;
    } catch (err) {
      if (!(err instanceof S3ServiceException) || err.$metadata.httpStatusCode !== 404) throw err;
    }
    try {
      await this.client.send(new CreateBucketCommand({ Bucket }));
      return true;
    } catch (err) {
      // Another process made it in between.
      if (err instanceof S3ServiceException && err.name === "BucketAlreadyOwnedByYou") return false;
      throw err;
    }
  }

  /** The object key of a blob. */
  key(id: string): string {
    return `${this.location.prefix}${checkedBlobId(id)}`;
  }

  async put(id: string, source: string | Readable, options: { contentType?: string } = {}) {
    const key = this.key(id);
    const contentType = options.contentType ?? DEFAULT_CONTENT_TYPE;
    let size = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.length;
        done(null, chunk);
      },
    });
    const body = typeof source === "string" ? createReadStream(source) : source;
    // Not `pipe`: a source that closes before its end (a client that hung up) must fail the
    // upload too, or it waits for the rest forever.
    pipeline(body, counted, () => {});
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.location.bucket, Key: key, Body: counted, ContentType: contentType },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      body.destroy();
      throw err;
    }
    if (typeof source === "string") await rm(source, { force: true });
    return { size, contentType };
  }

  async stat(id: string): Promise<BlobInfo | null> {
    if (!blobKind(id)) return null;
    try {
      const head = await this.client.send(
        new HeadObjectCommand({ Bucket: this.location.bucket, Key: this.key(id) }),
      );
      return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? DEFAULT_CONTENT_TYPE };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async read(id: string, range?: ByteRange): Promise<Readable> {
    const object = await this.client.send(
      new GetObjectCommand({
        Bucket: this.location.bucket,
        Key: this.key(id),
        ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
      }),
    );
    if (!(object.Body instanceof Readable)) throw new Error(`S3 returned no body for ${id}`);
    return object.Body;
  }

  async delete(id: string) {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: this.key(id) }));
  }

  /**
   * Lists the kind's keys page by page and deletes the old ones one request each (S3-compatible
   * servers differ on the checksums a batch delete needs; a sweep every few minutes has time).
   */
  async deleteOlderThan(kind: BlobKind, before: Date) {
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.location.bucket,
          Prefix: `${this.location.prefix}${kind}_`,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      const old = (page.Contents ?? []).filter(
        (object) => object.Key && object.LastModified && object.LastModified < before,
      );
      for (let i = 0; i < old.length; i += DELETES_IN_FLIGHT) {
        await Promise.all(
          old
            .slice(i, i + DELETES_IN_FLIGHT)
            .map((object) =>
              this.client.send(new DeleteObjectCommand({ Bucket: this.location.bucket, Key: object.Key })),
            ),
        );
      }
      deleted += old.length;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }

  /** Whether the bucket answers with these credentials: refvid checks it at start, for a clear error. */
  async check(): Promise<void> {
    await this.client.send(
      new ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: this.location.prefix, MaxKeys: 1 }),
    );
  }

  close(): void {
    this.client.destroy();
  }
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404;
}
