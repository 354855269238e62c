/**
 * What a model is to refvid: where it keeps its references, its limits beyond the schema, how an
 * input reads as a normalized request, and its prices. One file per model defines one of these;
 * `catalog.ts` indexes them. Adding a model is one file here plus its spec files.
 */
import type { ModelInputs, ModelSlug } from "@refvid/api-types";
import type { Micros } from "../money.js";

export type { ModelSlug };
export type ModelInput = ModelInputs[ModelSlug];
export type ReferenceKind = "image" | "video" | "audio";

/** Limits on one kind of reference file, checked once the file is downloaded (media preflight). */
export interface MediaLimits {
  formats: readonly string[];
  maxBytes?: number;
  minSeconds?: number;
  maxSeconds?: number;
  maxTotalSeconds?: number;
}

/** One request in the terms every model shares, with the model's defaults applied. */
export interface NormalizedRequest {
  slug: ModelSlug;
  prompt: string;
  /** Whole seconds asked for, or `auto` (model-a only). */
  duration: number | "auto";
  resolution: string;
  aspectRatio: string;
  generateAudio: boolean;
  references: Record<ReferenceKind, string[]>;
}

/** One per-second price and the input that selects it. */
export interface PriceTier {
  /** The label price preview shows: "720p, no video input". */
  tier: string;
  /** What selects it: the input's resolution, and whether video references are given (model-a). */
  when: { resolution?: string; video_references?: boolean };
  unitPrice: Micros;
}

export interface ModelDefinition<S extends ModelSlug = ModelSlug> {
  slug: S;
  /** Short name used in messages and price tiers: `model-a`. */
  name: string;
  /** One line on what the model does and its range, for the models list. */
  summary: string;
  /** Stem of the model's schema names in the spec: `ModelA` for `ModelAInput`, `PricePreviewModelARequest`. */
  schemaName: string;
  /** Input field holding each kind of reference; absent kinds are not accepted. */
  referenceFields: Partial<Record<ReferenceKind, string>>;
  /** At most this many reference files across all kinds. */
  maxTotalReferences?: number;
  /** Audio references need at least one image or video beside them. */
  audioNeedsVisual: boolean;
  /** The prompt cites references as `@Image1`, checked against the counts given. */
  atCitations: boolean;
  /** Longest video the model makes; `duration: "auto"` is reserved at this length. */
  maxDurationSeconds: number;
  media: Partial<Record<ReferenceKind, MediaLimits>>;
  /** Whether the output video carries `file_name` and `content_type` (not for model-c). */
  outputFileDetails: boolean;
  /** Reads a schema-valid input into a NormalizedRequest, filling in the defaults. */
  normalize(input: ModelInputs[S]): NormalizedRequest;
  /** Every per-second price the model has (as the spec documents them) and what selects it. */
  priceTable: readonly PriceTier[];
  /** The per-second price of a request and its tier label, for people: "720p, with video input". */
  unitPrice(request: NormalizedRequest): { unitPrice: Micros; tier: string };
}

export const MB = 1024 * 1024;

/** A price table with one tier per resolution. */
export const tiersByResolution = (
  table: Readonly<Record<string, Micros>>,
  extra: { label?: string; when?: PriceTier["when"] } = {},
): PriceTier[] =>
  Object.entries(table).map(([resolution, unitPrice]) => ({
    tier: extra.label ? `${resolution}, ${extra.label}` : resolution,
    when: { resolution, ...extra.when },
    unitPrice,
  }));

export function lookupPrice(table: Readonly<Record<string, Micros>>, resolution: string): Micros {
  const price = table[resolution];
  if (price === undefined) throw new RangeError(`no price for resolution ${resolution}`);
  return price;
}
