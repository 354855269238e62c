import type { BuiltInModelSlug, UploadQuota } from "@refvid/core";
import { z } from "zod";
import type { CatalogFile, CatalogSource } from "./catalog/catalog-file.js";
import { type AdminToken, parseAdminTokens } from "./config-admin.js";
import { ConfigError } from "./config-error.js";
import { type ProviderName, parseProviders, readCatalog } from "./config-models.js";
import { type BlobStoreConfig, parseBlobStore, parseStore, type StoreConfig } from "./config-storage.js";
import { MAX_UPLOAD_TTL_HOURS } from "./files/retention.js";
import { REFERENCE_TIMEOUT_MS } from "./media/preflight.js";
import { isLoopbackHost } from "./net/loopback.js";
import type { MinTransferRate } from "./net/rate-floor.js";
import { compileTrustProxy, type TrustProxy } from "./net/trust-proxy.js";
import { FAL_JWKS_URL } from "./providers/upstream/hook-signatures.js";

export interface Config {
  /** NODE_ENV=production: local URLs and the demo are off, and start-up is stricter (startup-checks.ts). */
  production: boolean;
  port: number;
  /**
   * `DATABASE_URL` wins (with DATABASE_LISTEN_URL, REFVID_PG_PREPARED_STATEMENTS and
   * REFVID_PG_POOL_SIZE); else REFVID_STORE (`memory` or `pglite:<dir>`).
   */
  store: StoreConfig;
  role: Role;
  adminToken: string | null;
  /** Every admin token by name: REFVID_ADMIN_TOKEN's (`admin`) and REFVID_ADMIN_TOKENS'. */
  adminTokens: AdminToken[];
  /** REFVID_METRICS_TOKEN: `GET /metrics` asks for it as a bearer token; open when null. */
  metricsToken: string | null;
  publicUrl: string;
  providers: Record<BuiltInModelSlug, ProviderName>;
  /** REFVID_PROVIDER's provider for models it does not name (catalog models without routes). */
  defaultProvider: ProviderName;
  /**
   * REFVID_CATALOG_FILE (or REFVID_PROVIDERS_FILE, which only routes the built-in models), read and
   * checked at boot: providers, models and routes (models without routes keep `providers`).
   */
  catalog: CatalogFile | null;
  /** Where the catalog file is read again on reload; null without one. */
  catalogSource: CatalogSource | null;
  /** How often a vendor job's status is polled. */
  upstreamPollMs: number;
  /**
   * REFVID_VENDOR_WEBHOOKS: vendors post their jobs' webhooks to this service; on unless the public
   * URL is a loopback address (no vendor can reach it).
   */
  vendorWebhooks: boolean;
  /** REFVID_VENDOR_POLL_BACKSTOP_MS: the wait between status calls while webhooks are on. */
  vendorBackstopMs: number;
  /** REFVID_VENDOR_ADOPT_WINDOW_MS: the longest wait for the webhook of a job whose create answer was lost. */
  vendorAdoptWindowMs: number;
  /** REFVID_FAL_JWKS_URL: where fal publishes the keys that sign its webhooks. */
  falJwksUrl: string;
  simulatedLatencyMs: number;
  runTimeoutMs: number;
  allowLocalUrls: boolean;
  webhookRetryDelaysMs: number[];
  webhookTimeoutMs: number;
  dataDir: string;
  signingSecret: string | null;
  fileUrlTtlSeconds: number;
  /** Generated videos are deleted this long after they were made. */
  fileRetentionHours: number;
  /** Where videos and uploads are kept: a local directory, or an S3-compatible bucket. */
  blobStore: BlobStoreConfig;
  /** Reference uploads (`POST /v1/files`) expire this long after they were made. */
  uploadTtlHours: number;
  /**
   * REFVID_UPLOAD_QUOTA_BYTES and REFVID_UPLOAD_QUOTA_COUNT: what an organization without its own
   * quota may keep in unexpired uploads at once.
   */
  uploadQuota: UploadQuota;
  workerConcurrency: number;
  /**
   * REFVID_WORKER_DOWNLOAD_SLOTS: runs one process downloads references for at once, apart from
   * its generation slots (worker/slots.ts); one organization's runs hold at most half of them.
   */
  workerDownloadSlots: number;
  /**
   * REFVID_MIN_DOWNLOAD_BYTES_PER_S over REFVID_MIN_DOWNLOAD_WINDOW_MS: a reference or vendor
   * output that downloads slower is cut off (net/rate-floor.ts); null when the rate is 0 (off).
   */
  minDownloadRate: MinTransferRate | null;
  /** How long a claimed run stays a worker's without a heartbeat; a dead worker's runs return after it. */
  workerLeaseMs: number;
  /** Claims after which a run whose lease lapsed again ends failed (a poison run must not kill workers forever). */
  workerMaxAttempts: number;
  seedDemo: boolean;
  logLevel: string;
  /** How long a client may take to send a whole request (headers and body); not the response. */
  requestTimeoutMs: number;
  /** How long a client may take to send the request headers. */
  headersTimeoutMs: number;
  /** Open connections the HTTP server takes at once; more are closed as they arrive. */
  maxConnections: number;
  /**
   * REFVID_MAX_CONNECTIONS_PER_ADDRESS: open connections from one client address (an IPv6 /64),
   * counted as they are accepted; 0 is no limit. Peers REFVID_TRUST_PROXY trusts are not counted.
   */
  maxConnectionsPerAddress: number;
  /** REFVID_TRUST_PROXY: which peers are reverse proxies (Express's `trust proxy`; net/trust-proxy.ts). */
  trustProxy: TrustProxy;
  /**
   * REFVID_MAX_REQUESTS_PER_KEY: requests one key may have in progress in this process, event
   * streams aside (they have REFVID_MAX_STREAMS_PER_KEY); 0 is no limit.
   */
  maxRequestsPerKey: number;
  /**
   * REFVID_MIN_BODY_BYTES_PER_S over REFVID_MIN_BODY_WINDOW_MS: a request body, an upload's too,
   * that arrives slower is refused (http/body-rate.ts); null when the rate is 0 (off).
   */
  minBodyRate: MinTransferRate | null;
  /**
   * REFVID_PROBE_PORT: a second HTTP server for /healthz, /readyz and /metrics only, outside the
   * main server's connection caps; null (unset) is none.
   */
  probePort: number | null;
  /** REFVID_MAX_STREAMS_PER_KEY: run event streams one key may hold open in this process. */
  maxStreamsPerKey: number;
  /**
   * REFVID_DRAIN_MS: how long a stopping process lets held sync submits and event streams wait for
   * their runs' ends before answering them with the runs as they stand (docs/decisions.md, "Shutdown").
   */
  drainMs: number;
}

/** What one process does: serve the API, run the worker side (worker, sweeper, webhooks), or both. */
export type Role = "all" | "api" | "worker";

export type { ProviderName } from "./config-models.js";
export type { BlobStoreConfig, StoreConfig } from "./config-storage.js";
export { ConfigError };

const DEFAULT_RETRY_DELAYS = "0,5000,300000,1800000,7200000,18000000,36000000,36000000";

/**
 * 5 GiB and 1,000 uploads per organization (docs/decisions.md, "Reference uploads"): 25 of the
 * largest videos any model takes, or thousands of images, kept for a day, while a few
 * organizations cannot fill a modest disk between them.
 */
export const DEFAULT_UPLOAD_QUOTA: UploadQuota = { bytes: 5 * 1024 ** 3, count: 1_000 };

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const flag = z
  .enum(["1", "0", "true", "false", "on", "off", "yes", "no"])
  .transform((v) => ["1", "true", "on", "yes"].includes(v));

const schema = z.object({
  PORT: int(0, 65535).default(8080),
  DATABASE_URL: z.string().url().optional(),
  DATABASE_LISTEN_URL: z.string().url().optional(),
  REFVID_PG_PREPARED_STATEMENTS: flag.optional(),
  REFVID_PG_POOL_SIZE: int(1, 1000).optional(),
  /** Unset: PGlite in REFVID_DATA_DIR/data. */
  REFVID_STORE: z.string().min(1).optional(),
  REFVID_ROLE: z.enum(["all", "api", "worker"]).default("all"),
  REFVID_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  REFVID_ADMIN_TOKENS: z.string().optional(),
  REFVID_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  REFVID_PUBLIC_URL: z.string().url().optional(),
  REFVID_PROVIDER: z.string().default("preview"),
  REFVID_PROVIDERS_FILE: z.string().min(1).optional(),
  REFVID_CATALOG_FILE: z.string().min(1).optional(),
  REFVID_UPSTREAM_POLL_MS: int(10, 60_000).default(1000),
  REFVID_VENDOR_WEBHOOKS: flag.optional(),
  REFVID_VENDOR_POLL_BACKSTOP_MS: int(10, 3_600_000).default(30_000),
  REFVID_VENDOR_ADOPT_WINDOW_MS: int(0).default(600_000),
  REFVID_FAL_JWKS_URL: z.string().url().default(FAL_JWKS_URL),
  REFVID_SIMULATED_LATENCY_MS: int(0).default(2000),
  REFVID_RUN_TIMEOUT_MS: int(1).default(900_000),
  REFVID_ALLOW_LOCAL_URLS: flag.optional(),
  REFVID_WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .default(DEFAULT_RETRY_DELAYS)
    .transform((text, ctx) => {
      const delays = text.split(",").map((part) => Number(part.trim()));
      if (delays.length === 0 || delays.some((d) => !Number.isSafeInteger(d) || d < 0)) {
        ctx.addIssue({
          code: "custom",
          message: "must be comma-separated whole milliseconds, such as 0,5000,300000",
        });
        return z.NEVER;
      }
      if (delays[0] !== 0) {
        ctx.addIssue({
          code: "custom",
          message: "the first entry is the first attempt, made when the run ends; it must be 0",
        });
        return z.NEVER;
      }
      return delays;
    }),
  REFVID_WEBHOOK_TIMEOUT_MS: int(1).default(10_000),
  REFVID_DATA_DIR: z.string().min(1).default(".refvid"),
  REFVID_SIGNING_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  REFVID_FILE_URL_TTL_SECONDS: int(60).default(86_400),
  REFVID_FILE_RETENTION_HOURS: int(1).default(168),
  REFVID_BLOB_STORE: z.string().min(1).optional(),
  REFVID_S3_ENDPOINT: z.string().url().optional(),
  REFVID_S3_PATH_STYLE: flag.optional(),
  REFVID_S3_PRESIGN: flag.default(false),
  AWS_REGION: z.string().min(1).optional(),
  AWS_ACCESS_KEY_ID: z.string().min(1).optional(),
  AWS_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  AWS_SESSION_TOKEN: z.string().min(1).optional(),
  REFVID_UPLOAD_TTL_HOURS: int(1, MAX_UPLOAD_TTL_HOURS).default(24),
  REFVID_UPLOAD_QUOTA_BYTES: int(0).default(DEFAULT_UPLOAD_QUOTA.bytes),
  REFVID_UPLOAD_QUOTA_COUNT: int(0, 2 ** 31 - 1).default(DEFAULT_UPLOAD_QUOTA.count),
  REFVID_WORKER_CONCURRENCY: int(1, 256).default(4),
  /** Unset: twice REFVID_WORKER_CONCURRENCY. */
  REFVID_WORKER_DOWNLOAD_SLOTS: int(1, 1024).optional(),
  REFVID_MIN_DOWNLOAD_BYTES_PER_S: int(0).default(32_768),
  REFVID_MIN_DOWNLOAD_WINDOW_MS: int(100)
    .max(
      REFERENCE_TIMEOUT_MS - 1,
      `must be shorter than the reference download timeout (${REFERENCE_TIMEOUT_MS} ms), or the floor never acts`,
    )
    .default(10_000),
  REFVID_WORKER_LEASE_MS: int(300).default(30_000),
  REFVID_WORKER_MAX_ATTEMPTS: int(1, 100).default(3),
  REFVID_SEED_DEMO: flag.optional(),
  REFVID_REQUEST_TIMEOUT_MS: int(1).default(30_000),
  REFVID_HEADERS_TIMEOUT_MS: int(1).default(10_000),
  REFVID_MAX_CONNECTIONS: int(1).default(1000),
  REFVID_MAX_CONNECTIONS_PER_ADDRESS: int(0).default(200),
  REFVID_TRUST_PROXY: z.string().optional(),
  REFVID_MAX_REQUESTS_PER_KEY: int(0).default(100),
  // 128 kbit/s over 10 s: docs/decisions.md, "Requests at the edge".
  REFVID_MIN_BODY_BYTES_PER_S: int(0).default(16 * 1024),
  REFVID_MIN_BODY_WINDOW_MS: int(100, 600_000).default(10_000),
  REFVID_PROBE_PORT: int(0, 65535).optional(),
  REFVID_MAX_STREAMS_PER_KEY: int(1).default(20),
  // Under the 30 s that Kubernetes gives a pod between SIGTERM and SIGKILL; an hour at most.
  REFVID_DRAIN_MS: int(0, 3_600_000).default(25_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.string().optional(),
});

/** Parses the environment; throws ConfigError naming every bad variable. */
/** The environment as the schema parsed it. */
export type ParsedEnv = z.infer<typeof schema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === "production";
  if (e.REFVID_HEADERS_TIMEOUT_MS > e.REFVID_REQUEST_TIMEOUT_MS) {
    throw new ConfigError(
      `Invalid configuration:\n  REFVID_HEADERS_TIMEOUT_MS: must not exceed REFVID_REQUEST_TIMEOUT_MS (${e.REFVID_REQUEST_TIMEOUT_MS}); the headers are part of the request`,
    );
  }
  if (!e.DATABASE_URL) {
    for (const name of [
      "DATABASE_LISTEN_URL",
      "REFVID_PG_PREPARED_STATEMENTS",
      "REFVID_PG_POOL_SIZE",
    ] as const) {
      if (e[name] !== undefined)
        throw new ConfigError(
          `Invalid configuration:\n  ${name}: applies only with DATABASE_URL (a Postgres server)`,
        );
    }
  }
  if (e.REFVID_CATALOG_FILE && e.REFVID_PROVIDERS_FILE) {
    throw new ConfigError(
      "Invalid configuration:\n  REFVID_PROVIDERS_FILE: give REFVID_CATALOG_FILE or REFVID_PROVIDERS_FILE, not both (a catalog file holds the routes too)",
    );
  }
  if (e.REFVID_PROBE_PORT !== undefined && e.REFVID_PROBE_PORT !== 0 && e.REFVID_PROBE_PORT === e.PORT) {
    throw new ConfigError(
      `Invalid configuration:\n  REFVID_PROBE_PORT: must differ from PORT (${e.PORT}); the probes get a port of their own`,
    );
  }
  const catalogSource: CatalogSource | null = e.REFVID_CATALOG_FILE
    ? { file: e.REFVID_CATALOG_FILE, variable: "REFVID_CATALOG_FILE", env }
    : e.REFVID_PROVIDERS_FILE
      ? { file: e.REFVID_PROVIDERS_FILE, variable: "REFVID_PROVIDERS_FILE", env }
      : null;
  const publicUrl = (e.REFVID_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, "");
  return {
    production,
    port: e.PORT,
    store: parseStore(e),
    role: e.REFVID_ROLE,
    adminToken: e.REFVID_ADMIN_TOKEN ?? null,
    adminTokens: parseAdminTokens(e.REFVID_ADMIN_TOKEN, e.REFVID_ADMIN_TOKENS),
    metricsToken: e.REFVID_METRICS_TOKEN ?? null,
    publicUrl,
    providers: parseProviders(e.REFVID_PROVIDER),
    defaultProvider: e.REFVID_PROVIDER.includes("=") ? "simulated" : (e.REFVID_PROVIDER as ProviderName),
    catalog: catalogSource ? readCatalog(catalogSource, production) : null,
    catalogSource,
    upstreamPollMs: e.REFVID_UPSTREAM_POLL_MS,
    vendorWebhooks: e.REFVID_VENDOR_WEBHOOKS ?? !isLoopbackHost(new URL(publicUrl).hostname),
    vendorBackstopMs: e.REFVID_VENDOR_POLL_BACKSTOP_MS,
    vendorAdoptWindowMs: e.REFVID_VENDOR_ADOPT_WINDOW_MS,
    falJwksUrl: e.REFVID_FAL_JWKS_URL,
    simulatedLatencyMs: e.REFVID_SIMULATED_LATENCY_MS,
    runTimeoutMs: e.REFVID_RUN_TIMEOUT_MS,
    allowLocalUrls: e.REFVID_ALLOW_LOCAL_URLS ?? !production,
    webhookRetryDelaysMs: e.REFVID_WEBHOOK_RETRY_DELAYS_MS,
    webhookTimeoutMs: e.REFVID_WEBHOOK_TIMEOUT_MS,
    dataDir: e.REFVID_DATA_DIR,
    signingSecret: e.REFVID_SIGNING_SECRET ?? null,
    fileUrlTtlSeconds: e.REFVID_FILE_URL_TTL_SECONDS,
    fileRetentionHours: e.REFVID_FILE_RETENTION_HOURS,
    blobStore: parseBlobStore(e),
    uploadTtlHours: e.REFVID_UPLOAD_TTL_HOURS,
    uploadQuota: { bytes: e.REFVID_UPLOAD_QUOTA_BYTES, count: e.REFVID_UPLOAD_QUOTA_COUNT },
    workerConcurrency: e.REFVID_WORKER_CONCURRENCY,
    workerDownloadSlots: e.REFVID_WORKER_DOWNLOAD_SLOTS ?? 2 * e.REFVID_WORKER_CONCURRENCY,
    minDownloadRate:
      e.REFVID_MIN_DOWNLOAD_BYTES_PER_S > 0
        ? { bytesPerSecond: e.REFVID_MIN_DOWNLOAD_BYTES_PER_S, windowMs: e.REFVID_MIN_DOWNLOAD_WINDOW_MS }
        : null,
    workerLeaseMs: e.REFVID_WORKER_LEASE_MS,
    workerMaxAttempts: e.REFVID_WORKER_MAX_ATTEMPTS,
    seedDemo: e.REFVID_SEED_DEMO ?? !production,
    logLevel: e.LOG_LEVEL,
    requestTimeoutMs: e.REFVID_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.REFVID_HEADERS_TIMEOUT_MS,
    maxConnections: e.REFVID_MAX_CONNECTIONS,
    maxConnectionsPerAddress: e.REFVID_MAX_CONNECTIONS_PER_ADDRESS,
    trustProxy: parseTrustProxy(e.REFVID_TRUST_PROXY),
    maxRequestsPerKey: e.REFVID_MAX_REQUESTS_PER_KEY,
    minBodyRate:
      e.REFVID_MIN_BODY_BYTES_PER_S > 0
        ? { bytesPerSecond: e.REFVID_MIN_BODY_BYTES_PER_S, windowMs: e.REFVID_MIN_BODY_WINDOW_MS }
        : null,
    probePort: e.REFVID_PROBE_PORT ?? null,
    maxStreamsPerKey: e.REFVID_MAX_STREAMS_PER_KEY,
    drainMs: e.REFVID_DRAIN_MS,
  };
}

function parseTrustProxy(text: string | undefined): TrustProxy {
  try {
    return compileTrustProxy(text);
  } catch (err) {
    throw new ConfigError(
      `Invalid configuration:\n  REFVID_TRUST_PROXY: ${(err as Error).message}; use true, false, a hop count, or addresses and subnets (10.0.0.0/8, loopback, uniquelocal) separated by commas`,
    );
  }
}
