/**
 * Prices per second of output (interface, "Prices"): 30% below vendor list, all eleven tiers.
 * model-a uses its with-video-input tiers (0.6x) when `video_urls` is given, and
 * `generate_audio` never changes its cost.
 */
import { assertNever, MODELS, type NormalizedRequest } from "./catalog.js";
import type { Micros } from "./money.js";

export interface Price {
  /** Micro-USD per second of output. */
  unitPrice: Micros;
  /** Whole seconds reserved at admission: the requested duration, or the model maximum for `auto`. */
  billableSeconds: number;
  amount: Micros;
  /** The tier that applies, for people: "720p, with video input". */
  tier: string;
}

const MODEL_A = {
  plain: { "480p": 72_000, "720p": 162_000, "1080p": 398_000 },
  withVideo: { "480p": 43_000, "720p": 97_000, "1080p": 239_000 },
} as const;
const MODEL_B = 56_000;
const MODEL_C = { "480p": 35_000, "720p": 49_000 } as const;
const MODEL_D = { "720p": 71_000, "1080p": 106_000 } as const;

/** The per-second price and its tier label for a normalized request. */
export function unitPriceOf(request: NormalizedRequest): { unitPrice: Micros; tier: string } {
  const { slug, resolution } = request;
  switch (slug) {
    case "lab-a/model-a/reference-to-video": {
      const withVideo = request.references.video.length > 0;
      const table: Record<string, number> = withVideo ? MODEL_A.withVideo : MODEL_A.plain;
      return {
        unitPrice: lookup(table, resolution),
        tier: `${resolution}, ${withVideo ? "with" : "no"} video input`,
      };
    }
    case "lab-b/model-b/reference-to-video":
      return { unitPrice: MODEL_B, tier: "all resolutions" };
    case "lab-c/model-c/reference-to-video":
      return { unitPrice: lookup(MODEL_C, resolution), tier: resolution };
    case "lab-d/model-d/reference-to-video":
      return { unitPrice: lookup(MODEL_D, resolution), tier: resolution };
    default:
      return assertNever(slug);
  }
}

/** What admission reserves for a request. */
export function priceRequest(request: NormalizedRequest): Price {
  const { unitPrice, tier } = unitPriceOf(request);
  const billableSeconds =
    request.duration === "auto" ? MODELS[request.slug].maxDurationSeconds : request.duration;
  return { unitPrice, billableSeconds, amount: unitPrice * billableSeconds, tier };
}

/** Container and codec padding (an AAC priming frame, say) that does not count as a second. */
export const DURATION_TOLERANCE_SECONDS = 0.05;

/**
 * The charge for a delivered video: its length rounded up to whole seconds (ignoring padding up
 * to DURATION_TOLERANCE_SECONDS), at least one second, and never more than was reserved, so a
 * provider that overshoots does not cost the client more.
 */
export function chargeFor(
  price: Price,
  deliveredSeconds: number,
): { billableSeconds: number; amount: Micros } {
  const rounded = Math.ceil(deliveredSeconds - DURATION_TOLERANCE_SECONDS);
  const seconds = Math.min(Math.max(rounded, 1), price.billableSeconds);
  return { billableSeconds: seconds, amount: price.unitPrice * seconds };
}

function lookup(table: Record<string, number>, resolution: string): Micros {
  const price = table[resolution];
  if (price === undefined) throw new RangeError(`no price for resolution ${resolution}`);
  return price;
}
