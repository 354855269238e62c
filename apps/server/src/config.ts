/**
 * The operator contract: configuration is environment
 * variables, parsed and checked once at boot. A bad value stops the process with a message
 * naming the variable.
 */
import { MODEL_SLUGS, type ModelSlug } from "@refvid/core";
import { z } from "zod";
import { loadRouting, type Routing, RoutingError } from "./providers/routing.js";

export type ProviderName = "simulated" | "preview";

export interface Config {
  /** NODE_ENV=production: local URLs and the demo are off, and start-up is stricter (startup-checks.ts). */
  production: boolean;
  port: number;
  /** `DATABASE_URL` wins; else REFVID_STORE (`memory` or `pglite:<dir>`). */
  store: StoreConfig;
  role: Role;
  adminToken: string | null;
  /** REFVID_METRICS_TOKEN: `GET /metrics` asks for it as a bearer token; open when null. */
  metricsToken: string | null;
  publicUrl: string;
  providers: Record<ModelSlug, ProviderName>;
  /** REFVID_PROVIDERS_FILE, read and checked: vendors and per-model routes (models without one keep `providers`). */
  routing: Routing | null;
  /** How often a vendor job's status is polled. */
  upstreamPollMs: number;
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
  workerConcurrency: number;
  /** How long a claimed run stays a worker's without a heartbeat; a dead worker's runs return after it. */
  workerLeaseMs: number;
  seedDemo: boolean;
  logLevel: string;
  /** How long a client may take to send a whole request (headers and body); not the response. */
  requestTimeoutMs: number;
  /** How long a client may take to send the request headers. */
  headersTimeoutMs: number;
  /** Open connections the HTTP server takes at once; more are closed as they arrive. */
  maxConnections: number;
  /** REFVID_MAX_STREAMS_PER_KEY: run event streams one key may hold open in this process. */
  maxStreamsPerKey: number;
}

/** What one process does: serve the API, run the worker side (worker, sweeper, webhooks), or both. */
export type Role = "all" | "api" | "worker";

export type StoreConfig =
  | { kind: "memory" }
  | { kind: "pglite"; dir: string }
  | { kind: "postgres"; url: string };

export class ConfigError extends Error {}

const PROVIDERS = ["simulated", "preview"] as const;
const DEFAULT_RETRY_DELAYS = "0,5000,300000,1800000,7200000,18000000,36000000,36000000";

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const flag = z
  .enum(["1", "0", "true", "false", "on", "off", "yes", "no"])
  .transform((v) => ["1", "true", "on", "yes"].includes(v));

const schema = z.object({
  PORT: int(0, 65535).default(8080),
  DATABASE_URL: z.string().url().optional(),
  REFVID_STORE: z.string().default("pglite:.refvid/data"),
  REFVID_ROLE: z.enum(["all", "api", "worker"]).default("all"),
  REFVID_ADMIN_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  REFVID_METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  REFVID_PUBLIC_URL: z.string().url().optional(),
  REFVID_PROVIDER: z.string().default("preview"),
  REFVID_PROVIDERS_FILE: z.string().min(1).optional(),
  REFVID_UPSTREAM_POLL_MS: int(10, 60_000).default(1000),
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
  REFVID_WORKER_CONCURRENCY: int(1, 256).default(4),
  REFVID_WORKER_LEASE_MS: int(300).default(30_000),
  REFVID_SEED_DEMO: flag.optional(),
  REFVID_REQUEST_TIMEOUT_MS: int(1).default(30_000),
  REFVID_HEADERS_TIMEOUT_MS: int(1).default(10_000),
  REFVID_MAX_CONNECTIONS: int(1).default(1000),
  REFVID_MAX_STREAMS_PER_KEY: int(1).default(20),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  NODE_ENV: z.string().optional(),
});

/** Parses the environment; throws ConfigError naming every bad variable. */
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
  return {
    production,
    port: e.PORT,
    store: e.DATABASE_URL ? { kind: "postgres", url: e.DATABASE_URL } : parseStore(e.REFVID_STORE),
    role: e.REFVID_ROLE,
    adminToken: e.REFVID_ADMIN_TOKEN ?? null,
    metricsToken: e.REFVID_METRICS_TOKEN ?? null,
    publicUrl: (e.REFVID_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/+$/, ""),
    providers: parseProviders(e.REFVID_PROVIDER),
    routing: e.REFVID_PROVIDERS_FILE ? readRouting(e.REFVID_PROVIDERS_FILE, env) : null,
    upstreamPollMs: e.REFVID_UPSTREAM_POLL_MS,
    simulatedLatencyMs: e.REFVID_SIMULATED_LATENCY_MS,
    runTimeoutMs: e.REFVID_RUN_TIMEOUT_MS,
    allowLocalUrls: e.REFVID_ALLOW_LOCAL_URLS ?? !production,
    webhookRetryDelaysMs: e.REFVID_WEBHOOK_RETRY_DELAYS_MS,
    webhookTimeoutMs: e.REFVID_WEBHOOK_TIMEOUT_MS,
    dataDir: e.REFVID_DATA_DIR,
    signingSecret: e.REFVID_SIGNING_SECRET ?? null,
    fileUrlTtlSeconds: e.REFVID_FILE_URL_TTL_SECONDS,
    fileRetentionHours: e.REFVID_FILE_RETENTION_HOURS,
    workerConcurrency: e.REFVID_WORKER_CONCURRENCY,
    workerLeaseMs: e.REFVID_WORKER_LEASE_MS,
    seedDemo: e.REFVID_SEED_DEMO ?? !production,
    logLevel: e.LOG_LEVEL,
    requestTimeoutMs: e.REFVID_REQUEST_TIMEOUT_MS,
    headersTimeoutMs: e.REFVID_HEADERS_TIMEOUT_MS,
    maxConnections: e.REFVID_MAX_CONNECTIONS,
    maxStreamsPerKey: e.REFVID_MAX_STREAMS_PER_KEY,
  };
}

function parseStore(text: string): StoreConfig {
  if (text === "memory") return { kind: "memory" };
  const dir = /^pglite:(.+)$/.exec(text)?.[1];
  if (dir) return { kind: "pglite", dir };
  throw new ConfigError(
    `REFVID_STORE: "${text}" is not a store; use "memory" or "pglite:<directory>" (or set DATABASE_URL)`,
  );
}

/** `simulated` for every model, or `slug=provider,slug=provider` with the rest `simulated`. */
function parseProviders(text: string): Record<ModelSlug, ProviderName> {
  const isProvider = (name: string): name is ProviderName => (PROVIDERS as readonly string[]).includes(name);
  const bad = (why: string) => new ConfigError(`REFVID_PROVIDER: ${why}`);
  const providers = PROVIDERS.join(", ");
  if (!text.includes("=")) {
    if (!isProvider(text))
      throw bad(`unknown provider "${text}" (providers: ${providers}; or slug=provider pairs)`);
    return Object.fromEntries(MODEL_SLUGS.map((slug) => [slug, text])) as Record<ModelSlug, ProviderName>;
  }
  const map = Object.fromEntries(MODEL_SLUGS.map((slug) => [slug, "simulated"])) as Record<
    ModelSlug,
    ProviderName
  >;
  for (const pair of text.split(",")) {
    const [slug = "", name = ""] = pair.split("=").map((s) => s.trim());
    if (!(MODEL_SLUGS as string[]).includes(slug))
      throw bad(`unknown model "${slug}" (models: ${MODEL_SLUGS.join(", ")})`);
    if (!isProvider(name)) throw bad(`unknown provider "${name}" for ${slug} (providers: ${providers})`);
    map[slug as ModelSlug] = name;
  }
  return map;
}

function readRouting(file: string, env: Record<string, string | undefined>): Routing {
  try {
    return loadRouting(file, env);
  } catch (err) {
    if (err instanceof RoutingError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
}
