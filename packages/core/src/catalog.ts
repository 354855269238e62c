/**
 * The four models of the interface ("Endpoints", inputs of model-a to model-d): where each keeps
 * its references, its limits beyond the schema, and how to read an input into one normalized
 * request. The OpenAPI schema checks single fields; this module knows the rest.
 */
import type {
  ModelAInput,
  ModelBInput,
  ModelCInput,
  ModelDInput,
  ModelInputs,
  ModelSlug,
} from "@refvid/api-types";

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

export interface ModelDefinition {
  slug: ModelSlug;
  /** Short name used in messages and price tiers: `model-a`. */
  name: string;
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
}

const MB = 1024 * 1024;

export const MODELS: Readonly<Record<ModelSlug, ModelDefinition>> = {
  "lab-a/model-a/reference-to-video": {
    slug: "lab-a/model-a/reference-to-video",
    name: "model-a",
    referenceFields: { image: "image_urls", video: "video_urls", audio: "audio_urls" },
    maxTotalReferences: 50,
    audioNeedsVisual: true,
    atCitations: true,
    maxDurationSeconds: 30,
    media: {
      image: { formats: ["jpeg", "png", "webp", "bmp", "tiff", "gif", "heic", "heif"], maxBytes: 30 * MB },
      video: {
        formats: ["mp4", "mov"],
        maxBytes: 200 * MB,
        minSeconds: 1.8,
        maxSeconds: 30.2,
        maxTotalSeconds: 30.2,
      },
      audio: { formats: ["mp3", "wav"], minSeconds: 1.8, maxSeconds: 30.2, maxTotalSeconds: 30.2 },
    },
    outputFileDetails: true,
  },
  "lab-b/model-b/reference-to-video": {
    slug: "lab-b/model-b/reference-to-video",
    name: "model-b",
    referenceFields: {
      image: "reference_image_urls",
      video: "reference_video_urls",
      audio: "reference_audio_urls",
    },
    maxTotalReferences: 12,
    audioNeedsVisual: true,
    atCitations: false,
    maxDurationSeconds: 15,
    media: {
      video: { formats: ["mp4", "mov"], minSeconds: 2, maxSeconds: 15, maxTotalSeconds: 15 },
      audio: { formats: ["mp3", "wav"], minSeconds: 2, maxSeconds: 15, maxTotalSeconds: 15 },
    },
    outputFileDetails: true,
  },
  "lab-c/model-c/reference-to-video": {
    slug: "lab-c/model-c/reference-to-video",
    name: "model-c",
    referenceFields: { image: "reference_image_urls" },
    audioNeedsVisual: false,
    atCitations: true,
    maxDurationSeconds: 15,
    media: {},
    outputFileDetails: false,
  },
  "lab-d/model-d/reference-to-video": {
    slug: "lab-d/model-d/reference-to-video",
    name: "model-d",
    referenceFields: { image: "image_urls" },
    audioNeedsVisual: false,
    atCitations: false,
    maxDurationSeconds: 8,
    media: {},
    outputFileDetails: true,
  },
};

export const MODEL_SLUGS = Object.keys(MODELS) as ModelSlug[];

export function isModelSlug(slug: string): slug is ModelSlug {
  return Object.hasOwn(MODELS, slug);
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

/** Reads a schema-valid input of `slug` into a NormalizedRequest, filling in the defaults. */
export function normalizeInput(slug: ModelSlug, input: ModelInput): NormalizedRequest {
  switch (slug) {
    case "lab-a/model-a/reference-to-video": {
      const a = input as ModelAInput;
      return {
        slug,
        prompt: a.prompt,
        duration: a.duration === undefined || a.duration === "auto" ? "auto" : Number(a.duration),
        resolution: a.resolution ?? "720p",
        aspectRatio: a.aspect_ratio ?? "auto",
        generateAudio: a.generate_audio ?? true,
        references: { image: a.image_urls ?? [], video: a.video_urls ?? [], audio: a.audio_urls ?? [] },
      };
    }
    case "lab-b/model-b/reference-to-video": {
      const b = input as ModelBInput;
      return {
        slug,
        prompt: b.prompt,
        duration: b.duration ?? 5,
        resolution: b.resolution ?? "768P",
        aspectRatio: b.aspect_ratio ?? "adaptive",
        generateAudio: (b.reference_audio_urls?.length ?? 0) > 0,
        references: {
          image: b.reference_image_urls ?? [],
          video: b.reference_video_urls ?? [],
          audio: b.reference_audio_urls ?? [],
        },
      };
    }
    case "lab-c/model-c/reference-to-video": {
      const c = input as ModelCInput;
      return {
        slug,
        prompt: c.prompt,
        duration: c.duration ?? 6,
        resolution: c.resolution ?? "720p",
        aspectRatio: c.aspect_ratio ?? "16:9",
        generateAudio: true,
        references: { image: c.reference_image_urls, video: [], audio: [] },
      };
    }
    case "lab-d/model-d/reference-to-video": {
      const d = input as ModelDInput;
      return {
        slug,
        prompt: d.prompt,
        duration: Number.parseInt(d.duration ?? "8s", 10),
        resolution: d.resolution ?? "720p",
        aspectRatio: d.aspect_ratio ?? "16:9",
        generateAudio: d.generate_audio ?? true,
        references: { image: d.image_urls, video: [], audio: [] },
      };
    }
    default:
      return assertNever(slug);
  }
}

export function assertNever(value: never): never {
  throw new Error(`unexpected value: ${String(value)}`);
}
