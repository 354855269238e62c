/**
 * The models refvid serves, indexed by slug. Each is defined in a file of its own under models/
 * (references, limits, defaults, prices); this index is all the rest of the code reads.
 */
import type { ModelInputs } from "@refvid/api-types";
import type { ModelDefinition, ModelInput, ModelSlug, NormalizedRequest } from "./models/definition.js";
import { modelA } from "./models/model-a.js";
import { modelB } from "./models/model-b.js";
import { modelC } from "./models/model-c.js";
import { modelD } from "./models/model-d.js";

export type {
  MediaLimits,
  ModelDefinition,
  ModelInput,
  ModelSlug,
  NormalizedRequest,
  ReferenceKind,
} from "./models/definition.js";

export const MODELS: { readonly [S in ModelSlug]: ModelDefinition<S> } = {
  [modelA.slug]: modelA,
  [modelB.slug]: modelB,
  [modelC.slug]: modelC,
  [modelD.slug]: modelD,
};

export const MODEL_SLUGS = Object.keys(MODELS) as ModelSlug[];

export function isModelSlug(slug: string): slug is ModelSlug {
  return Object.hasOwn(MODELS, slug);
}

/** Reads a schema-valid input of `slug` into a NormalizedRequest, filling in the defaults. */
export function normalizeInput<S extends ModelSlug>(
  slug: S,
  input: ModelInputs[S] | ModelInput,
): NormalizedRequest {
  return (MODELS[slug] as ModelDefinition<S>).normalize(input as ModelInputs[S]);
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
