/**
 * Prices per second of output (interface, "Prices"). Each model's table is in its own file under
 * models/; this module turns a request into what admission reserves and a delivery into a charge.
 */
import { MODELS, type NormalizedRequest } from "./catalog.js";
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

/** The per-second price and its tier label for a normalized request. */
export function unitPriceOf(request: NormalizedRequest): { unitPrice: Micros; tier: string } {
  return MODELS[request.slug].unitPrice(request);
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
  price: Pick<Price, "unitPrice" | "billableSeconds">,
  deliveredSeconds: number,
): { billableSeconds: number; amount: Micros } {
  const rounded = Math.ceil(deliveredSeconds - DURATION_TOLERANCE_SECONDS);
  const seconds = Math.min(Math.max(rounded, 1), price.billableSeconds);
  return { billableSeconds: seconds, amount: price.unitPrice * seconds };
}

/** The charge for a run's delivered video, at the unit price and within the seconds it reserved. */
export const chargeForRun = (
  run: { unitPrice: Micros; reservedSeconds: number },
  deliveredSeconds: number,
): { billableSeconds: number; amount: Micros } =>
  chargeFor({ unitPrice: run.unitPrice, billableSeconds: run.reservedSeconds }, deliveredSeconds);
