/**
 * Which providers serve which model, in order: from the routing file (REFVID_PROVIDERS_FILE) where
 * it names the model, else today's shorthand (REFVID_PROVIDER: `simulated` or `preview`). Each route
 * of a vendor gets its own adapter, carrying that route's model, input and renames.
 */
import type { ModelSlug } from "@refvid/core";
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import { CogProvider } from "./cog.js";
import { FalProvider } from "./fal.js";
import type { PreviewProvider } from "./preview.js";
import { ReplicateProvider } from "./replicate.js";
import type { RouteEntry, Routing } from "./routing.js";
import type { SimulatedProvider } from "./simulated.js";
import type { Provider } from "./types.js";

export interface ProviderRoute {
  /** The provider's name: in the routing file, or `simulated` / `preview`. */
  name: string;
  provider: Provider;
  /** A model vendor (fal, Replicate, Cog): runs of test keys never reach it. */
  vendor: boolean;
  /** Runs the provider takes at once across every worker process (`max_concurrency`). */
  maxConcurrency?: number;
}

export type Routes = Record<ModelSlug, ProviderRoute[]>;

/** The configuration routes are built from (the parsed `Config` has these fields). */
export interface RoutesConfig {
  /** REFVID_PROVIDERS_FILE, read and checked; null when none is given. */
  routing: Routing | null;
  /** REFVID_PROVIDER: the provider of each built-in model the routing file does not name. */
  providers: Partial<Record<ModelSlug, "simulated" | "preview">>;
  /** REFVID_PROVIDER: the provider of any other model without routes. */
  defaultProvider: "simulated" | "preview";
  /** REFVID_ALLOW_LOCAL_URLS: vendors' output videos may be on loopback or private hosts. */
  allowLocalUrls: boolean;
  /** REFVID_UPSTREAM_POLL_MS: how often a vendor job's status is polled. */
  upstreamPollMs: number;
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
  config: RoutesConfig,
  deps: RegistryDeps,
  overrides: Partial<Record<ModelSlug, Provider>> = {},
): Routes {
  const routes: Routes = {};
  for (const slug of slugs) {
    const override = overrides[slug];
    const fromFile = config.routing?.routes[slug];
    if (override) routes[slug] = [{ name: "override", provider: override, vendor: false }];
    else if (fromFile) {
      routes[slug] = fromFile.map((route) => ({
        name: route.provider.name,
        provider: make(route, config, deps),
        vendor: isVendor(route.provider.type),
        ...(route.provider.maxConcurrency ? { maxConcurrency: route.provider.maxConcurrency } : {}),
      }));
    } else {
      const name = config.providers[slug] ?? config.defaultProvider;
      routes[slug] = [{ name, provider: name === "preview" ? deps.preview : deps.simulated, vendor: false }];
    }
  }
  return routes;
}

const isVendor = (type: RouteEntry["provider"]["type"]) =>
  type === "fal" || type === "replicate" || type === "cog";

function make(route: RouteEntry, config: RoutesConfig, deps: RegistryDeps): Provider {
  const { provider } = route;
  const common = {
    name: provider.name,
    token: provider.token,
    mapping: {
      ...(route.input ? { input: route.input } : {}),
      ...(route.rename ? { rename: route.rename } : {}),
      ...(route.only ? { only: route.only } : {}),
      ...(route.omit ? { omit: route.omit } : {}),
      ...(route.asNumber ? { asNumber: route.asNumber } : {}),
    },
    allowLocalOutputs: config.allowLocalUrls,
    pollMs: config.upstreamPollMs,
    scheduler: deps.scheduler,
    clock: deps.clock,
    logger: deps.logger.child({ provider: provider.name }),
  };
  switch (provider.type) {
    case "fal":
      return new FalProvider({
        ...common,
        ...(provider.url ? { url: provider.url } : {}),
        model: route.model ?? "",
      });
    case "replicate":
      return new ReplicateProvider({
        ...common,
        ...(provider.url ? { url: provider.url } : {}),
        model: route.model ?? "",
      });
    case "cog":
      return new CogProvider({ ...common, url: provider.url ?? "" });
    case "preview":
      return deps.preview;
    case "simulated":
      return deps.simulated;
  }
}
