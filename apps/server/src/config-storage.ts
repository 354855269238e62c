/**
 * The store and the blob store, from the environment: DATABASE_URL (and the PgBouncer settings)
 * or REFVID_STORE; REFVID_BLOB_STORE with the S3 variables, or a directory.
 */
import { join } from "node:path";
import type { ParsedEnv } from "./config.js";
import { ConfigError } from "./config-error.js";
import { parseS3Url, type S3Location } from "./files/s3-location.js";
import { MAX_PRESIGN_SECONDS } from "./files/s3-presign.js";

export type BlobStoreConfig =
  | { kind: "local"; dir: string }
  /** `presign`: file URLs are S3 presigned GET URLs instead of refvid's own. */
  | { kind: "s3"; location: S3Location; presign: boolean };

export type StoreConfig =
  | { kind: "memory" }
  | { kind: "pglite"; dir: string }
  | {
      kind: "postgres";
      /** DATABASE_URL: every statement and transaction; may be a pooler in transaction mode. */
      url: string;
      /** DATABASE_LISTEN_URL: the LISTEN connection, a session of its own; DATABASE_URL when unset. */
      listenUrl: string;
      /** REFVID_PG_PREPARED_STATEMENTS: hot statements are prepared once per connection (docs/pgbouncer.md). */
      preparedStatements: boolean;
      /** REFVID_PG_POOL_SIZE: connections to DATABASE_URL one process holds at most. */
      poolSize: number;
    };

/**
 * DATABASE_URL wins (behind PgBouncer in transaction mode, see docs/pgbouncer.md); else
 * REFVID_STORE, by default PGlite in REFVID_DATA_DIR/data.
 */
export function parseStore(e: ParsedEnv): StoreConfig {
  if (e.DATABASE_URL) {
    return {
      kind: "postgres",
      url: e.DATABASE_URL,
      listenUrl: e.DATABASE_LISTEN_URL ?? e.DATABASE_URL,
      preparedStatements: e.REFVID_PG_PREPARED_STATEMENTS ?? true,
      poolSize: e.REFVID_PG_POOL_SIZE ?? 10,
    };
  }
  const text = e.REFVID_STORE ?? `pglite:${join(e.REFVID_DATA_DIR, "data")}`;
  if (text === "memory") return { kind: "memory" };
  const dir = /^pglite:(.+)$/.exec(text)?.[1];
  if (dir) return { kind: "pglite", dir };
  throw new ConfigError(
    `REFVID_STORE: "${text}" is not a store; use "memory" or "pglite:<directory>" (or set DATABASE_URL)`,
  );
}

/** Where files are kept: REFVID_BLOB_STORE and the S3 variables, or REFVID_DATA_DIR/files. */
export function parseBlobStore(e: ParsedEnv): BlobStoreConfig {
  const text = e.REFVID_BLOB_STORE;
  const bad = (name: string, why: string) => new ConfigError(`Invalid configuration:\n  ${name}: ${why}`);
  if (!text) {
    for (const name of ["REFVID_S3_ENDPOINT", "REFVID_S3_PATH_STYLE"] as const) {
      if (e[name] !== undefined) throw bad(name, "applies only with REFVID_BLOB_STORE=s3://bucket/prefix");
    }
    if (e.REFVID_S3_PRESIGN)
      throw bad("REFVID_S3_PRESIGN", "applies only with REFVID_BLOB_STORE=s3://bucket/prefix");
    return { kind: "local", dir: join(e.REFVID_DATA_DIR, "files") };
  }
  const bucket = parseS3Url(text);
  if (!bucket) {
    throw bad(
      "REFVID_BLOB_STORE",
      `"${text}" is not a bucket; use s3://bucket or s3://bucket/prefix (unset keeps files in REFVID_DATA_DIR)`,
    );
  }
  if ((e.AWS_ACCESS_KEY_ID === undefined) !== (e.AWS_SECRET_ACCESS_KEY === undefined)) {
    throw bad(
      e.AWS_ACCESS_KEY_ID === undefined ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
      "set both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or neither (the SDK's default chain)",
    );
  }
  const credentials =
    e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: e.AWS_ACCESS_KEY_ID,
          secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
          ...(e.AWS_SESSION_TOKEN ? { sessionToken: e.AWS_SESSION_TOKEN } : {}),
        }
      : null;
  if (e.REFVID_S3_PRESIGN) {
    if (!credentials) {
      throw bad(
        "REFVID_S3_PRESIGN",
        "presigned URLs are signed with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; set both",
      );
    }
    // A URL is signed at the start of the hour and lives to the TTL rounded up to the hour.
    const longest = MAX_PRESIGN_SECONDS - 2 * 3600;
    if (e.REFVID_FILE_URL_TTL_SECONDS > longest) {
      throw bad(
        "REFVID_FILE_URL_TTL_SECONDS",
        `must be at most ${longest} with REFVID_S3_PRESIGN (S3 presigned URLs live at most 7 days)`,
      );
    }
  }
  return {
    kind: "s3",
    presign: e.REFVID_S3_PRESIGN,
    location: {
      ...bucket,
      region: e.AWS_REGION ?? "us-east-1",
      endpoint: e.REFVID_S3_ENDPOINT ?? null,
      // S3-compatible servers mostly want path-style; AWS itself wants virtual-hosted.
      forcePathStyle: e.REFVID_S3_PATH_STYLE ?? e.REFVID_S3_ENDPOINT !== undefined,
      credentials,
    },
  };
}
