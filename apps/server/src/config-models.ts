/** The models' providers (REFVID_PROVIDER) and the catalog file, from the environment. */
import { type BuiltInModelSlug, MODEL_SLUGS } from "@refvid/core";
import {
  CatalogError,
  type CatalogFile,
  type CatalogSource,
  checkLosses,
  loadCatalogFile,
} from "./catalog/catalog-file.js";
import { ConfigError } from "./config-error.js";

export type ProviderName = "simulated" | "preview";

const PROVIDERS = ["simulated", "preview"] as const;

/** `simulated` for every model, or `slug=provider,slug=provider` with the rest `simulated`. */
export function parseProviders(text: string): Record<BuiltInModelSlug, ProviderName> {
  const isProvider = (name: string): name is ProviderName => (PROVIDERS as readonly string[]).includes(name);
  const bad = (why: string) => new ConfigError(`REFVID_PROVIDER: ${why}`);
  const providers = PROVIDERS.join(", ");
  if (!text.includes("=")) {
    if (!isProvider(text))
      throw bad(`unknown provider "${text}" (providers: ${providers}; or slug=provider pairs)`);
    return Object.fromEntries(MODEL_SLUGS.map((slug) => [slug, text])) as Record<
      BuiltInModelSlug,
      ProviderName
    >;
  }
  const map = Object.fromEntries(MODEL_SLUGS.map((slug) => [slug, "simulated"])) as Record<
    BuiltInModelSlug,
    ProviderName
  >;
  for (const pair of text.split(",")) {
    const [slug = "", name = ""] = pair.split("=").map((s) => s.trim());
    if (!(MODEL_SLUGS as string[]).includes(slug))
      throw bad(`unknown model "${slug}" (models: ${MODEL_SLUGS.join(", ")})`);
    if (!isProvider(name)) throw bad(`unknown provider "${name}" for ${slug} (providers: ${providers})`);
    map[slug as BuiltInModelSlug] = name;
  }
  return map;
}

/** The catalog file, checked; its problems as a ConfigError naming the variable. */
export function readCatalog(source: CatalogSource, production: boolean): CatalogFile {
  try {
    const catalog = loadCatalogFile(source);
    checkLosses(catalog, production, source.variable);
    return catalog;
  } catch (err) {
    if (err instanceof CatalogError) throw new ConfigError(`Invalid configuration:\n  ${err.message}`);
    throw err;
  }
}
