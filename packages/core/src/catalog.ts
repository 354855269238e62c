/**
 * The models refvid serves, indexed by slug. The four built-in models are defined one per file
 * under models/; the operator's catalog file adds more and may re-price or re-route the built-in
 * ones (the server builds the running `Catalog` from both). Code that serves runs asks the running
 * catalog, never the built-in list.
 */
import type { ModelInputs } from "@refvid/api-types";
import type {
  BuiltInModel,
  BuiltInModelSlug,
  ModelDefinition,
  ModelInput,
  ModelSlug,
  NormalizedRequest,
} from "./models/definition.js";
import { modelA } from "./models/model-a.js";
import { modelB } from "./models/model-b.js";
import { modelC } from "./models/model-c.js";
import { modelD } from "./models/model-d.js";

export type {
  BuiltInModel,
  BuiltInModelSlug,
  MediaLimits,
  ModelDefinition,
  ModelInput,
  ModelSlug,
  NormalizedRequest,
  PriceTier,
  PriceUnit,
  ReferenceKind,
  UnitPrice,
} from "./models/definition.js";
export { PRICE_UNITS, REFERENCE_KINDS, tiersByResolution } from "./models/definition.js";

/** The four models of the interface, as it defines them. */
export const MODELS: { readonly [S in BuiltInModelSlug]: BuiltInModel<S> } = {
  [modelA.slug]: modelA,
  [modelB.slug]: modelB,
  [modelC.slug]: modelC,
  [modelD.slug]: modelD,
};

export const MODEL_SLUGS = Object.keys(MODELS) as BuiltInModelSlug[];

export function isBuiltInModelSlug(slug: string): slug is BuiltInModelSlug {
  return Object.hasOwn(MODELS, slug);
}

/** The models a server serves, by slug, in the order they are listed. */
export class Catalog {
  readonly #models: ReadonlyMap<ModelSlug, ModelDefinition>;

  constructor(models: Iterable<ModelDefinition>) {
    this.#models = new Map([...models].map((model) => [model.slug, model]));
  }

  /** The model with this slug, or undefined. */
  get(slug: string): ModelDefinition | undefined {
    return this.#models.get(slug);
  }

  has(slug: string): boolean {
    return this.#models.has(slug);
  }

  get slugs(): ModelSlug[] {
    return [...this.#models.keys()];
  }

  get models(): ModelDefinition[] {
    return [...this.#models.values()];
  }
}

/** The built-in models alone: what a server serves without a catalog file. */
export const BUILT_IN_CATALOG = new Catalog(Object.values(MODELS));

/** Reads a schema-valid input of a built-in model into a NormalizedRequest, filling in the defaults. */
export function normalizeInput<S extends BuiltInModelSlug>(
  slug: S,
  input: ModelInputs[S] | ModelInput,
): NormalizedRequest {
  return (MODELS[slug] as ModelDefinition<ModelInputs[S]>).normalize(input as ModelInputs[S]);
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
