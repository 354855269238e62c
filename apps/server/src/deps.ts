/**
 * Everything the services, the worker and the dispatcher need, as one typed object built in one
 * place (`buildDeps` in runtime.ts, or a test), never as module singletons.
 */
import type { Store } from "@refvid/store";
import type { Logger } from "pino";
import type { KeyCache } from "./auth/key-cache.js";
import type { ServedCatalog } from "./catalog/served-catalog.js";
import type { Clock, Scheduler } from "./clock.js";
import type { Config } from "./config.js";
import type { RunEvents } from "./events/run-events.js";
import type { BlobStore } from "./files/blob-store.js";
import type { FileUrlSigner } from "./files/signed-urls.js";
import type { Metrics } from "./metrics/metrics.js";
import type { PageCursors } from "./page-cursors.js";
import type { Provider } from "./providers/types.js";
import type { VendorHookUrls } from "./providers/upstream/hook-urls.js";

export interface AppDeps {
  config: Config;
  store: Store;
  /** API keys as authentication reads them, cached for under a second. */
  keys: KeyCache;
  clock: Clock;
  /** Every timer of the loops, the worker and sync waits; tests pass a ManualClock. */
  scheduler: Scheduler;
  logger: Logger;
  blobs: BlobStore;
  signer: FileUrlSigner;
  /** Signs the lists' page cursors and opens them, under the signing secret. */
  cursors: PageCursors;
  /** The URLs vendors post a run's webhooks to, and their check. */
  hookUrls: VendorHookUrls;
  /** The models served, with the providers that serve each, in order (the later ones fallbacks). */
  catalog: ServedCatalog;
  /** Where runs of test keys go instead of a model vendor: the simulated provider. */
  sandbox: Provider;
  /** The store's run events, as this process hears them (close them before the store). */
  events: RunEvents;
  /** This process's Prometheus registry and the hooks that feed it (`GET /metrics`). */
  metrics: Metrics;
}
