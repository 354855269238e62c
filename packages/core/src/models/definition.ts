/**
 * What a model is to refvid: where it keeps its references, its limits beyond the schema, how an
 * input reads as a normalized request, and its prices. The four built-in models are defined one
 * per file here; the operator's catalog file defines more (the server builds them from the file).
 */
import type { ModelSlug as BuiltInModelSlug, ModelInputs } from "@refvid/api-types";
import type { Micros } from "../money.js";

/** A slug of one of the four built-in models of the interface. */
export type { BuiltInModelSlug };
/** Any model's slug, `<lab>/<model>/<category>`: a built-in model's or one from the catalog file. */
export type ModelSlug = string;
export type ModelInput = ModelInputs[BuiltInModelSlug];
export type ReferenceKind = "image" | "video" | "audio";
export const REFERENCE_KINDS: readonly ReferenceKind[] = ["image", "video", "audio"];

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
  /** Whole seconds asked for, or `auto`: reserved at the model's longest. */
  duration: number | "auto";
  /** Empty when the model has no resolution field. */
  resolution: string;
  aspectRatio: string;
  generateAudio: boolean;
  references: Record<ReferenceKind, string[]>;
  /** The input's top-level plain values (defaults filled in), which price tiers may select on. */
  values?: Readonly<Record<string, string | number | boolean>>;
}

/**
 * How a price counts: by the second of output (every built-in model's), or once for the whole run
 * whatever its length (a catalog model's, when its file says `usd_per_run`).
 */
export type PriceUnit = "second" | "run";
export const PRICE_UNITS: readonly PriceUnit[] = ["second", "run"];

/** A price and the unit it counts in. */
export interface UnitPrice {
  unit: PriceUnit;
  /** Micro-USD per second of output, or for the run. */
  unitPrice: Micros;
}

/** One price and the input that selects it. */
export interface PriceTier extends UnitPrice {
  /** The label price preview shows: "720p, no video input". */
  tier: string;
  /**
   * What selects it: values of the input's fields (`resolution`), and whether references of a kind
   * are given (`video_references`). Empty: every input.
   */
  when: Readonly<Record<string, string | number | boolean>>;
}

export interface ModelDefinition<Input = unknown> {
  slug: ModelSlug;
  /** Short name used in messages and price tiers: `model-a`. */
  name: string;
  /** One line on what the model does and its range, for the models list. */
  summary: string;
  /**
   * Stem of a built-in model's schema names in the spec: `ModelA` for `ModelAInput`. Absent for
   * models of the catalog file.
   */
  schemaName?: string;
  /** Input field holding each kind of reference; absent kinds are not accepted. */
  referenceFields: Partial<Record<ReferenceKind, string>>;
  /** At most this many reference files across all kinds. */
  maxTotalReferences?: number;
  /** Audio references need at least one image or video beside them. */
  audioNeedsVisual: boolean;
  /** The prompt cites references as `@Image1`, checked against the counts given. */
  atCitations: boolean;
  /** Longest video the model makes; a run without a numeric duration is reserved at this length. */
  maxDurationSeconds: number;
  /**
   * The input field holding the duration, for a catalog file model: a longer duration than
   * `maxDurationSeconds` is refused there (the built-in models' schemas refuse it themselves).
   */
  durationField?: string;
  /**
   * The input fields holding the prompt, duration, resolution and aspect ratio, where they are not
   * those names (a catalog file model's `fields`): how the `/v1/videos` surface fills them in.
   */
  fieldNames?: Readonly<Partial<Record<"prompt" | "duration" | "resolution" | "aspect_ratio", string>>>;
  media: Partial<Record<ReferenceKind, MediaLimits>>;
  /** Whether the output video carries `file_name` and `content_type` (not for model-c). */
  outputFileDetails: boolean;
  /** Reads a schema-valid input into a NormalizedRequest, filling in the defaults. */
  normalize(input: Input): NormalizedRequest;
  /**
   * Every price the model has and what selects it; a request pays the first tier whose `when` it
   * meets (`pricing.ts`). All of a table's tiers count in one unit (the catalog file checks it).
   */
  priceTable: readonly PriceTier[];
}

/** A built-in model: its input is the spec's type for that model. */
export type BuiltInModel<S extends BuiltInModelSlug> = ModelDefinition<ModelInputs[S]> & { slug: S };

export const MB = 1024 * 1024;

/** A per-second price table with one tier per resolution. */
export const tiersByResolution = (
  table: Readonly<Record<string, Micros>>,
  extra: { label?: string; when?: PriceTier["when"] } = {},
): PriceTier[] =>
  Object.entries(table).map(([resolution, unitPrice]) => ({
    tier: extra.label ? `${resolution}, ${extra.label}` : resolution,
    when: { resolution, ...extra.when },
    unit: "second",
    unitPrice,
  }));
