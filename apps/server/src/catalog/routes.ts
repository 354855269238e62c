/**
 * Which providers serve which model, in order: from the catalog file where it routes the model,
 * else the shorthand (REFVID_PROVIDER: `simulated` or `preview`). Each route of a vendor gets its
 * own adapter, carrying that route's vendor model, input shaping and output path.
 */
import type { ModelSlug } from "@refvid/core";
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import type { MinTransferRate } from "../net/rate-floor.js";
import { CogProvider } from "../providers/cog.js";
import { FalProvider } from "../providers/fal.js";
import type { PreviewProvider } from "../providers/preview.js";
import { ReplicateProvider } from "../providers/replicate.js";
import type { SimulatedProvider } from "../providers/simulated.js";
import type { Provider } from "../providers/types.js";
import type { CompiledExpression } from "../providers/upstream/mapping.js";
import type { VendorSchema } from "../providers/upstream/vendor-schema.js";
import type { CatalogFile, CostTier, RouteEntry } from "./catalog-file.js";

export interface ProviderRoute {
  /**
   * The route's name, unique within its model (the provider's unless the file names it): kept on
   * the vendor job, so a worker taking a run over resumes the job on this route.
   */
  name: string;
  /** The provider's name (the catalog file's, or `simulated` / `preview`): whose slots it takes. */
  slot: string;
  provider: Provider;
  /** A model vendor (fal, Replicate, Cog): runs of test keys never reach it. */
  vendor: boolean;
  /** Runs the provider takes at once across every worker process (`max_concurrency`). */
  maxConcurrency?: number;
  /** JSONata from our input (defaults filled in, upload URLs signed) to the vendor's. */
  map?: CompiledExpression;
  /** The vendor's input schema: a run whose mapped input it refuses never takes this route. */
  vendorSchema?: VendorSchema;
  /** What the vendor charges, per second of output or per run, by input. */
  cost?: CostTier[];
}

export type Routes = Record<ModelSlug, ProviderRoute[]>;

/** The configuration routes are built from (the parsed `Config` has these fields). */
export interface RoutesConfig {
  /** REFVID_PROVIDER: the provider of each built-in model the routing file does not name. */
  providers: Partial<Record<ModelSlug, "simulated" | "preview">>;
  /** REFVID_PROVIDER: the provider of any other model without routes. */
  defaultProvider: "simulated" | "preview";
  /** REFVID_ALLOW_LOCAL_URLS: vendors' output videos may be on loopback or private hosts. */
  allowLocalUrls: boolean;
  /** REFVID_UPSTREAM_POLL_MS: how often a vendor job's status is polled. */
  upstreamPollMs: number;
  /** REFVID_MIN_DOWNLOAD_BYTES_PER_S over its window: the slowest a vendor's output video may download. */
  minDownloadRate?: MinTransferRate | null;
  /** REFVID_VENDOR_ADOPT_WINDOW_MS: the longest wait for a lost create's webhook. */
  vendorAdoptWindowMs?: number;
  /** REFVID_FAL_JWKS_URL: the keys fal signs its webhooks with. */
  falJwksUrl?: string;
}

export interface RegistryDeps {
  scheduler: Scheduler;
  clock: Clock;
  logger: Logger;
  simulated: SimulatedProvider;
  preview: PreviewProvider;
}

/**
 * The routes of each of `slugs`, in order; `overrides` (tests) replace a model's routes with one
 * provider.
 */
export function buildRoutes(
  slugs: readonly ModelSlug[],
  catalog: CatalogFile | null,
  config: RoutesConfig,
  deps: RegistryDeps,
  overrides: Partial<Record<ModelSlug, Provider>> = {},
): Routes {
  const routes: Routes = {};
  for (const slug of slugs) {
    const override = overrides[slug];
    const fromFile = catalog?.routes[slug];
    if (override) routes[slug] = [{ name: "override", slot: "override", provider: override, vendor: false }];
    else if (fromFile) {
      routes[slug] = fromFile.map((route) => ({
        name: route.name,
        slot: route.provider.name,
        provider: make(route, config, deps),
        vendor: isVendor(route.provider.type),
        ...(route.provider.maxConcurrency ? { maxConcurrency: route.provider.maxConcurrency } : {}),
        ...(route.map ? { map: route.map } : {}),
        ...(route.vendorSchema ? { vendorSchema: route.vendorSchema } : {}),
        ...(route.cost ? { cost: route.cost } : {}),
      }));
    } else {
      const name = config.providers[slug] ?? config.defaultProvider;
      const provider = name === "preview" ? deps.preview : deps.simulated;
      routes[slug] = [{ name, slot: name, provider, vendor: false }];
    }
  }
  return routes;
}

export const isVendor = (type: RouteEntry["provider"]["type"]) =>
  type === "fal" || type === "replicate" || type === "cog";

function make(route: RouteEntry, config: RoutesConfig, deps: RegistryDeps): Provider {
  const { provider } = route;
  const common = {
    name: route.name,
    token: provider.token,
    mapping: {
      ...(route.input ? { input: route.input } : {}),
      ...(route.rename ? { rename: route.rename } : {}),
      ...(route.only ? { only: route.only } : {}),
      ...(route.omit ? { omit: route.omit } : {}),
      ...(route.asNumber ? { asNumber: route.asNumber } : {}),
    },
    ...(route.output ? { output: route.output } : {}),
    allowLocalOutputs: config.allowLocalUrls,
    minDownloadRate: config.minDownloadRate ?? null,
    pollMs: config.upstreamPollMs,
    ...(config.vendorAdoptWindowMs === undefined ? {} : { adoptWindowMs: config.vendorAdoptWindowMs }),
    scheduler: deps.scheduler,
    clock: deps.clock,
    logger: deps.logger.child({ provider: provider.name }),
  };
  switch (provider.type) {
    case "fal":
      return new FalProvider({
        ...common,
        ...(provider.url ? { url: provider.url } : {}),
        ...(config.falJwksUrl ? { jwksUrl: config.falJwksUrl } : {}),
        model: route.model ?? "",
      });
    case "replicate":
      return new ReplicateProvider({
        ...common,
        ...(provider.url ? { url: provider.url } : {}),
        model: route.model ?? "",
      });
    case "cog":
      return new CogProvider({ ...common, url: provider.url ?? "", slot: provider.name });
    case "preview":
      return deps.preview;
    case "simulated":
      return deps.simulated;
  }
}
