/**
 * The catalog a server serves: each model's definition (prices, limits, rules) with the routes
 * that serve it. `ServedCatalog.current` is the version in service; a reload swaps it whole, so a
 * request reads one version from start to end. Routes a reload removed stay known to this process
 * (`route`), so a run already on one finishes there rather than being sent to a vendor again.
 */
import { Catalog, MODELS, type ModelDefinition, NotFoundError } from "@refvid/core";
import type { Provider } from "../providers/types.js";
import { CatalogError, type CatalogFile } from "./catalog-file.js";
import type { InputSchema } from "./input-schema.js";
import { buildRoutes, type ProviderRoute, type RegistryDeps, type RoutesConfig } from "./routes.js";

export interface ServedModel {
  model: ModelDefinition;
  /** The routes, in order: the later ones are fallbacks. */
  routes: ProviderRoute[];
  /** A model of the interface: its input is checked by the spec's own schema for it. */
  builtIn: boolean;
  /** A catalog file model's input schema; the built-in ones' are in the spec. */
  input?: InputSchema;
}

/** One version of the catalog, as loaded at boot or by a reload. */
export class CatalogVersion {
  readonly catalog: Catalog;
  readonly #served: ReadonlyMap<string, ServedModel>;
  /** The catalog file's other names of models (`aliases`), for the `/v1/videos` surface. */
  readonly aliases: Readonly<Record<string, string>>;

  constructor(models: readonly ServedModel[], aliases: Readonly<Record<string, string>> = {}) {
    this.catalog = new Catalog(models.map((served) => served.model));
    this.#served = new Map(models.map((served) => [served.model.slug, served]));
    this.aliases = aliases;
  }

  /** The model with this slug, or undefined. */
  find(slug: string): ServedModel | undefined {
    return this.#served.get(slug);
  }

  /** The model with this slug, or a 404 `model_not_found` naming the models there are. */
  get(slug: string): ServedModel {
    const found = this.#served.get(slug);
    if (!found) {
      throw new NotFoundError(
        "model_not_found",
        `No model ${slug}. Models: ${this.catalog.slugs.join(", ")}.`,
      );
    }
    return found;
  }

  get models(): ServedModel[] {
    return [...this.#served.values()];
  }
}

/**
 * The catalog version a file makes (or the built-in models alone, without one): the built-in
 * models, re-priced where the file says, then the file's own, each with its routes.
 * `overrides` (tests) give a model one provider.
 */
export function catalogVersion(
  file: CatalogFile | null,
  config: RoutesConfig,
  deps: RegistryDeps,
  overrides: Partial<Record<string, Provider>> = {},
): CatalogVersion {
  const models: Omit<ServedModel, "routes">[] = [
    ...Object.values(MODELS).map((model) => {
      const prices = file?.prices[model.slug];
      return { model: prices ? { ...model, priceTable: prices } : model, builtIn: true };
    }),
    ...(file?.models ?? []).map(({ model, input }) => ({ model, input, builtIn: false })),
  ];
  const routes = buildRoutes(
    models.map(({ model }) => model.slug),
    file,
    config,
    deps,
    overrides,
  );
  return new CatalogVersion(
    models.map((served) => ({ ...served, routes: routes[served.model.slug] ?? [] })),
    file?.aliases,
  );
}

export class ServedCatalog {
  #current: CatalogVersion;
  /** Every route this process has served, by model and route name: the current ones win. */
  readonly #known = new Map<string, ProviderRoute>();
  /** The last version of every model this process has served. */
  readonly #models = new Map<string, ServedModel>();

  readonly #readAgain: (() => CatalogVersion) | undefined;

  /** `readAgain` reads the catalog file anew (throwing a CatalogError saying what is wrong). */
  constructor(first: CatalogVersion, readAgain?: () => CatalogVersion) {
    this.#current = first;
    this.#readAgain = readAgain;
    this.#remember(first);
  }

  /**
   * Reads the catalog file again and puts it in service. A file with problems throws a
   * CatalogError, as at boot, and the version in service stays.
   */
  reload(): CatalogVersion {
    if (!this.#readAgain) {
      throw new CatalogError("There is no catalog file to read again: the server was started without one.");
    }
    const next = this.#readAgain();
    this.swap(next);
    return next;
  }

  get current(): CatalogVersion {
    return this.#current;
  }

  /** Puts `next` in service; runs already admitted keep their prices (they are on the runs). */
  swap(next: CatalogVersion): void {
    this.#current = next;
    this.#remember(next);
  }

  /**
   * The model a run admitted earlier is served by: the current version's, or, for a model a reload
   * removed, the last one this process served (undefined when it never served it).
   */
  forRun(slug: string): ServedModel | undefined {
    return this.#current.find(slug) ?? this.#models.get(slug);
  }

  /** The route `name` of a model, in the current version or one this process served before. */
  route(slug: string, name: string): ProviderRoute | undefined {
    return (
      this.#current.find(slug)?.routes.find((r) => r.name === name) ?? this.#known.get(`${slug}\n${name}`)
    );
  }

  /** Every provider a route of any version uses (the slots they take). */
  providerNames(): string[] {
    return [...new Set([...this.#known.values()].map((route) => route.slot))];
  }

  #remember(version: CatalogVersion): void {
    for (const served of version.models) {
      this.#models.set(served.model.slug, served);
      for (const route of served.routes) this.#known.set(`${served.model.slug}\n${route.name}`, route);
    }
  }
}
