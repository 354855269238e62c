/**
 * Prices per second of output (interface, "Prices"). Each model carries its price table (the
 * built-in ones in their files under models/, the catalog file's from the file); this module turns
 * a request into what admission reserves and a delivery into a charge.
 */
import type { ModelDefinition, NormalizedRequest, PriceTier } from "./catalog.js";
import type { FieldProblem } from "./model-rules.js";
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

/** What a price tier's `when` is compared with: the input's values and which references are given. */
export function requestFacts(request: NormalizedRequest): Record<string, string | number | boolean> {
  return {
    ...request.values,
    ...(request.resolution ? { resolution: request.resolution } : {}),
    image_references: request.references.image.length > 0,
    video_references: request.references.video.length > 0,
    audio_references: request.references.audio.length > 0,
  };
}

/** Whether a tier's `when` holds for these facts: every value named is the fact's (as text). */
export function tierApplies(
  when: PriceTier["when"],
  facts: Readonly<Record<string, string | number | boolean>>,
): boolean {
  return Object.entries(when).every(([key, value]) => key in facts && String(facts[key]) === String(value));
}

/** The first of `tiers` whose `when` holds for the request, or undefined. */
export function priceTierFor<T extends Pick<PriceTier, "when">>(
  tiers: readonly T[],
  request: NormalizedRequest,
): T | undefined {
  const facts = requestFacts(request);
  return tiers.find((tier) => tierApplies(tier.when, facts));
}

/** The per-second price and its tier label for a normalized request; undefined when no tier applies. */
export function unitPriceOf(
  model: Pick<ModelDefinition, "priceTable">,
  request: NormalizedRequest,
): { unitPrice: Micros; tier: string } | undefined {
  const tier = priceTierFor(model.priceTable, request);
  return tier && { unitPrice: tier.unitPrice, tier: tier.tier };
}

/**
 * What admission reserves for a request, or the problem when no price tier applies to it (a
 * catalog model whose table does not cover every input its schema allows), naming the fields
 * the tiers select on.
 */
export function priceRequest(
  model: Pick<ModelDefinition, "priceTable" | "maxDurationSeconds" | "name">,
  request: NormalizedRequest,
  fieldPrefix = "body.input",
): Price | FieldProblem {
  const found = unitPriceOf(model, request);
  if (!found) {
    const keys = [...new Set(model.priceTable.flatMap((tier) => Object.keys(tier.when)))];
    const facts = requestFacts(request);
    const asked = keys.map((key) => `${key} ${String(facts[key] ?? "(none)")}`).join(", ");
    const field = keys.find((key) => !key.endsWith("_references")) ?? "";
    return {
      field: field ? `${fieldPrefix}.${field}` : fieldPrefix,
      message: `${model.name} has no price for ${asked || "this input"}; prices: ${model.priceTable.map((t) => t.tier).join("; ")}`,
      rule: "price",
    };
  }
  const billableSeconds = request.duration === "auto" ? model.maxDurationSeconds : request.duration;
  return {
    unitPrice: found.unitPrice,
    billableSeconds,
    amount: found.unitPrice * billableSeconds,
    tier: found.tier,
  };
}

/** A price, or throws when no tier applies: for built-in models, whose tables cover every input. */
export function priceOf(model: Parameters<typeof priceRequest>[0], request: NormalizedRequest): Price {
  const price = priceRequest(model, request);
  if ("field" in price) throw new RangeError(`${price.field}: ${price.message}`);
  return price;
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
