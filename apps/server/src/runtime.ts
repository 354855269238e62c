/**
 * Assembles a running refvid: dependencies from the configuration, the HTTP server, the worker,
 * the sweeper and the webhook dispatcher, with a graceful `close`. main.ts and the end-to-end
 * tests both start refvid through `startRefvid`, so the tests run what operators run.
 */
import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import type { ModelSlug } from "@refvid/core";
import type { Store } from "@refvid/store";
import pino, { type Logger } from "pino";
import { createApp } from "./app.js";
import { KeyCache } from "./auth/key-cache.js";
import { type CatalogFile, checkLosses, describeLoss, loadCatalogFile } from "./catalog/catalog-file.js";
import { ProviderReachability } from "./catalog/reachability.js";
import { catalogVersion, ServedCatalog } from "./catalog/served-catalog.js";
import { type Clock, type Scheduler, sleep, systemClock, systemScheduler } from "./clock.js";
import type { Config } from "./config.js";
import type { AppDeps } from "./deps.js";
import { RunEvents } from "./events/run-events.js";
import type { BlobStore } from "./files/blob-store.js";
import { LocalBlobStore } from "./files/local-blob-store.js";
import { RetentionSweep } from "./files/retention.js";
import { S3BlobStore } from "./files/s3-blob-store.js";
import { presignGetObject } from "./files/s3-presign.js";
import { FileUrlSigner, type Presign } from "./files/signed-urls.js";
import { Drain, LAST_ANSWERS_MS } from "./http/drain.js";
import { createExpressServer } from "./http/express-server.js";
import { configureHttpServer, type HttpLimits } from "./http/http-server.js";
import { countRunEnds } from "./metrics/count-run-ends.js";
import { Metrics } from "./metrics/metrics.js";
import { openStore } from "./open-store.js";
import { PageCursors } from "./page-cursors.js";
import { PreviewProvider } from "./providers/preview.js";
import { SimulatedProvider } from "./providers/simulated.js";
import type { Provider } from "./providers/types.js";
import { VendorHookUrls } from "./providers/upstream/hook-urls.js";
import { StartupError } from "./startup-checks.js";
import { WebhookDispatcher } from "./webhooks/dispatcher.js";
import { Sweeper } from "./worker/sweeper.js";
import { Worker } from "./worker/worker.js";

export interface StartOptions {
  logger?: Logger;
  clock?: Clock;
  /** Timers of the loops, the worker and sync waits (tests pass a ManualClock as both). */
  scheduler?: Scheduler;
  store?: Store;
  onResponseMismatch?: (error: Error) => void;
  /** Providers to use instead of the configured ones, by model (tests). */
  providers?: Partial<Record<ModelSlug, Provider>>;
  /** Host to bind; loopback unless told otherwise. */
  host?: string;
}

export interface RunningRefvid {
  deps: AppDeps;
  server: Server;
  url: string;
  /** REFVID_PROBE_PORT's server (the probes and /metrics only), when there is one. */
  probeServer: Server | null;
  probeUrl: string | null;
  /** The process's stop (http/drain.ts): `drain.hurry()` cuts its wait short. */
  drain: Drain;
  /**
   * Stops gracefully (docs/decisions.md, "Shutdown"): takes no new connection and no new run,
   * lets held sync submits and event streams wait for their runs up to REFVID_DRAIN_MS, gives the
   * runs in hand WORKER_GRACE_MS more, then closes everything.
   */
  close(): Promise<void>;
}

/**
 * Connections REFVID_PROBE_PORT's server takes at once: probers (a kubelet, Docker, a load
 * balancer, Prometheus) open a few; more is someone who should not reach that port.
 */
export const PROBE_MAX_CONNECTIONS = 64;

/** How long the runs in hand get after the drain before they are left to their leases. */
export const WORKER_GRACE_MS = 5_000;
/** After the worker: webhook deliveries in flight (each REFVID_WEBHOOK_TIMEOUT_MS at most), then closing. */
const CLOSING_MS = 10_000;

/**
 * The longest a graceful stop may take; main.ts exits 1 if it takes longer. Above the drain's
 * deadline and the answers after it, the worker's grace, a webhook delivery in flight and closing.
 */
export function stopDeadlineMs(config: Pick<Config, "drainMs" | "webhookTimeoutMs">): number {
  return config.drainMs + LAST_ANSWERS_MS + WORKER_GRACE_MS + config.webhookTimeoutMs + CLOSING_MS;
}

export async function buildDeps(config: Config, options: StartOptions = {}): Promise<AppDeps> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const dataDir = resolve(config.dataDir);
  await mkdir(dataDir, { recursive: true });
  const signingSecret = config.signingSecret ?? (await persistentSecret(join(dataDir, "signing-secret")));
  const clock = options.clock ?? systemClock;
  const scheduler = options.scheduler ?? systemScheduler;
  const simulated = new SimulatedProvider({
    latencyMs: config.simulatedLatencyMs,
    cacheDir: join(dataDir, "cache"),
    scheduler,
  });
  const registry = { scheduler, clock, logger, simulated, preview: new PreviewProvider() };
  const served = (file: CatalogFile | null) => {
    const losses = checkLosses(file, config.production, config.catalogSource?.variable ?? "");
    for (const loss of losses) logger.warn({ loss }, `a route loses money: ${describeLoss(loss)}`);
    return catalogVersion(file, config, registry, options.providers);
  };
  const source = config.catalogSource;
  const catalog = new ServedCatalog(
    served(config.catalog),
    source ? () => served(loadCatalogFile(source)) : undefined,
  );
  const metrics = new Metrics({
    models: catalog.current.catalog.slugs,
    // Every route's provider, and the sandbox that test runs go to.
    providers: ["simulated", ...catalog.providerNames()],
  });
  const { blobs, presign } = openBlobStore(config, clock);
  const store = countRunEnds(options.store ?? (await openStore(config.store)), metrics);
  // Wakes this process's loops and sync waiters when any process queues, starts or ends a run.
  const events = await RunEvents.from(store, logger).catch(async (err: unknown) => {
    await store.close();
    throw err;
  });
  return {
    config,
    store,
    keys: new KeyCache(store, clock),
    clock,
    scheduler,
    logger,
    blobs,
    signer: new FileUrlSigner(signingSecret, config.publicUrl, config.fileUrlTtlSeconds, presign),
    hookUrls: new VendorHookUrls(signingSecret, config.publicUrl),
    cursors: new PageCursors(signingSecret),
    catalog,
    sandbox: simulated,
    events,
    metrics,
  };
}

/**
 * JSON lines on stdout, written asynchronously: a log reader that falls behind (a full pipe) never
 * stalls the event loop, and lines written together go out in one write. pino flushes what is
 * left when the process exits. Past 64 MiB waiting, lines are dropped rather than held.
 */
function createLogger(level: string): Logger {
  return pino({ level }, pino.destination({ dest: 1, sync: false, maxLength: 64 * 1024 * 1024 }));
}

export async function startRefvid(config: Config, options: StartOptions = {}): Promise<RunningRefvid> {
  const deps = await buildDeps(config, options);
  await checkBlobStore(deps).catch(async (err: unknown) => {
    await deps.events.close();
    await deps.store.close();
    throw err;
  });
  const drain = new Drain();
  const reachability = new ProviderReachability(config.catalog?.providers ?? [], deps);
  reachability.start();
  const probeOptions = {
    drain,
    listenHealth: () => deps.events.listenHealth,
    providerReachability: () => reachability.snapshot(),
    ...(options.onResponseMismatch ? { onResponseMismatch: options.onResponseMismatch } : {}),
  };
  const app = createApp(deps, { ...probeOptions, serveApi: config.role !== "worker" });
  const workerSide = config.role !== "api";
  const worker = new Worker(deps, {
    workerId: `worker-${process.pid}-${randomBytes(3).toString("hex")}`,
    concurrency: config.workerConcurrency,
    leaseMs: config.workerLeaseMs,
  });
  const sweeper = new Sweeper(deps);
  const dispatcher = new WebhookDispatcher(deps);
  const retention = new RetentionSweep(deps);
  const host = options.host ?? "127.0.0.1";
  const server = await listen(createExpressServer(app), config.port, host, config, deps.logger).catch(
    async (err: unknown) => {
      await deps.events.close();
      await deps.store.close();
      throw listenError(err, config.port, host, "PORT");
    },
  );
  // The probes' own server: outside the API's connection caps, up through the drain.
  const probeServer =
    config.probePort === null
      ? null
      : await listen(
          createExpressServer(createApp(deps, { ...probeOptions, probePort: true })),
          config.probePort,
          host,
          { ...config, maxConnections: PROBE_MAX_CONNECTIONS, maxConnectionsPerAddress: 0 },
          deps.logger,
        ).catch(async (err: unknown) => {
          await new Promise((done) => server.close(done));
          await deps.events.close();
          await deps.store.close();
          throw listenError(err, config.probePort ?? 0, host, "REFVID_PROBE_PORT");
        });
  server.keepAliveTimeout = 65_000;
  if (workerSide) {
    worker.start();
    sweeper.start();
    dispatcher.start();
    retention.start();
  }
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    deps,
    server,
    url: `http://127.0.0.1:${port}`,
    probeServer,
    probeUrl: probeServer ? `http://127.0.0.1:${(probeServer.address() as AddressInfo).port}` : null,
    drain,
    close() {
      closing ??= (async () => {
        drain.begin();
        // No new connection: refused, a proxy tries the next process. Node also closes the idle
        // keep-alive ones; a request on one still open is refused with a 503 (drain.ts).
        const stopped = new Promise<void>((done) => server.close(() => done()));
        const loops = Promise.all([
          reachability.stop(),
          sweeper.stop(),
          retention.stop(),
          worker.stopClaiming(),
        ]);
        await drain.settle(config.drainMs);
        await loops;
        await worker.stop(WORKER_GRACE_MS);
        await dispatcher.stop();
        // What is left: idle connections, and a request admitted as the drain ended, answering now.
        server.closeIdleConnections();
        const answered = new AbortController();
        await Promise.race([stopped, sleep(systemScheduler, LAST_ANSWERS_MS, answered.signal)]);
        answered.abort();
        server.closeAllConnections();
        await stopped;
        // The probes answered through the drain (readiness with 503); now they go too.
        if (probeServer) {
          const probesStopped = new Promise((done) => probeServer.close(done));
          probeServer.closeAllConnections();
          await probesStopped;
        }
        await deps.events.close();
        await deps.store.close();
        deps.blobs.close?.();
      })();
      return closing;
    },
  };
}

/** The configured blob store, and how to presign its URLs when files are served by S3 itself. */
function openBlobStore(config: Config, clock: Clock): { blobs: BlobStore; presign: Presign | null } {
  const { blobStore } = config;
  if (blobStore.kind === "local") {
    return { blobs: new LocalBlobStore(resolve(blobStore.dir), clock), presign: null };
  }
  const s3 = new S3BlobStore(blobStore.location);
  const { credentials } = blobStore.location;
  const presign: Presign | null =
    blobStore.presign && credentials
      ? (id, signedAt, seconds) =>
          presignGetObject(blobStore.location, credentials, s3.key(id), signedAt, seconds)
      : null;
  return { blobs: s3, presign };
}

/** A bucket that cannot be listed with the configured keys stops the start, saying why. */
async function checkBlobStore(deps: AppDeps): Promise<void> {
  if (!(deps.blobs instanceof S3BlobStore)) return;
  const { bucket, prefix, endpoint } = deps.blobs.location;
  try {
    await deps.blobs.check();
  } catch (err) {
    const code = (err as { name?: string }).name ?? "Error";
    throw new StartupError(
      `REFVID_BLOB_STORE: cannot list s3://${bucket}/${prefix} at ${endpoint ?? "AWS"}: ${code}: ${(err as Error).message}`,
    );
  }
}

/**
 * Listens on `port`, with the HTTP limits set before `'listening'` (http/http-server.ts). Once
 * listening, an error is one connection's (an accept that failed for want of file descriptors,
 * say): logged, never the end of the process.
 */
function listen(s: Server, port: number, host: string, limits: HttpLimits, logger: Logger): Promise<Server> {
  return new Promise<Server>((resolveListen, reject) => {
    s.once("error", reject);
    s.listen(port, host, () => {
      s.off("error", reject);
      s.on("error", (err) => logger.error({ err }, "the HTTP server could not accept a connection"));
      resolveListen(s);
    });
    configureHttpServer(s, limits, logger);
  });
}

/** Why the server could not listen, in the operator's terms; `variable` is the port's setting. */
function listenError(err: unknown, port: number, host: string, variable: string): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === "EADDRINUSE")
    return new StartupError(
      `port ${port} on ${host} is already in use by another process; stop it, or set ${variable} to a free port`,
    );
  if (code === "EACCES")
    return new StartupError(
      `port ${port} on ${host} needs privileges this process lacks; set ${variable} to 1024 or above`,
    );
  if (code === "EADDRNOTAVAIL")
    return new StartupError(`${host} is not an address of this machine; set HOST to one (or 0.0.0.0)`);
  return err instanceof Error ? err : new Error(String(err));
}

/** A secret kept in the data directory, so signed URLs outlive a restart. */
async function persistentSecret(path: string): Promise<string> {
  try {
    const existing = (await readFile(path, "utf8")).trim();
    if (existing.length >= 32) return existing;
  } catch {
    // first start
  }
  const secret = randomBytes(32).toString("base64url");
  await writeFile(path, `${secret}\n`, { mode: 0o600 });
  return secret;
}
