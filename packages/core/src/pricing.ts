/**
 * Prices per second of output (interface, "Prices"), or per run for a catalog model whose file
 * says so (docs/decisions.md, "Model catalog"). Each model carries its price table (the built-in
 * ones in their files under models/, the catalog file's from the file); this module turns a
 * request into what admission reserves and a delivery into a charge, and compares a vendor's cost
 * with a price.
 */
import {
  assertNever,
  type ModelDefinition,
  type NormalizedRequest,
  type PriceTier,
  type PriceUnit,
  type UnitPrice,
} from "./catalog.js";
import type { FieldProblem } from "./model-rules.js";
import type { Micros } from "./money.js";

export interface Price extends UnitPrice {
  /**
   * Whole seconds reserved at admission: the requested duration, or the model maximum for `auto`.
   * A per-run price does not depend on them; they are still the most the run may deliver.
   */
  billableSeconds: number;
  /** What admission reserves: the unit price times the seconds, or the run's price. */
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

/** The price, its unit and its tier label for a normalized request; undefined when no tier applies. */
export function unitPriceOf(
  model: Pick<ModelDefinition, "priceTable">,
  request: NormalizedRequest,
): (UnitPrice & { tier: string }) | undefined {
  const tier = priceTierFor(model.priceTable, request);
  return tier && { unit: tier.unit, unitPrice: tier.unitPrice, tier: tier.tier };
}

/** The one unit a price table counts in: the catalog file refuses a table that mixes units. */
export function unitOfTable(table: readonly UnitPrice[]): PriceUnit {
  const units = [...new Set(table.map((tier) => tier.unit))];
  const [unit] = units;
  if (units.length !== 1 || unit === undefined) {
    throw new RangeError(`a price table counts in one unit; this one has ${units.join(" and ") || "none"}`);
  }
  return unit;
}

/**
 * What a price comes to for a run of `seconds`: the unit price times the seconds, or the run's
 * price whatever its length. The client's charge and a route's vendor cost are both this.
 */
export function amountFor(price: UnitPrice, seconds: number): Micros {
  switch (price.unit) {
    case "second":
      return price.unitPrice * seconds;
    case "run":
      return price.unitPrice;
    default:
      return assertNever(price.unit);
  }
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
    unit: found.unit,
    unitPrice: found.unitPrice,
    billableSeconds,
    amount: amountFor(found, billableSeconds),
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

/** The fewest seconds a delivered video is billed: a shorter one still counts one. */
export const MIN_BILLED_SECONDS = 1;

/**
 * The charge for a delivered video. Its seconds are its length rounded up to whole seconds
 * (ignoring padding up to DURATION_TOLERANCE_SECONDS), at least one, and never more than were
 * reserved, so a provider that overshoots does not cost the client more. Per second, the charge is
 * the unit price times those seconds; per run, the run's price whatever its length (which is what
 * was reserved).
 */
export function chargeFor(
  price: Pick<Price, "unit" | "unitPrice" | "billableSeconds">,
  deliveredSeconds: number,
): { billableSeconds: number; amount: Micros } {
  const rounded = Math.ceil(deliveredSeconds - DURATION_TOLERANCE_SECONDS);
  const seconds = Math.min(Math.max(rounded, MIN_BILLED_SECONDS), price.billableSeconds);
  return { billableSeconds: seconds, amount: amountFor(price, seconds) };
}

/** The charge for a run's delivered video, at its own price and unit, within the seconds it reserved. */
export const chargeForRun = (
  run: { priceUnit: PriceUnit; unitPrice: Micros; reservedSeconds: number },
  deliveredSeconds: number,
): { billableSeconds: number; amount: Micros } =>
  chargeFor(
    { unit: run.priceUnit, unitPrice: run.unitPrice, billableSeconds: run.reservedSeconds },
    deliveredSeconds,
  );

/** A vendor's cost and a price, as `compareCostWithPrice` puts them side by side. */
export interface CostComparison {
  /** What the vendor takes: per unit when both count in one unit, else for a run of `seconds`. */
  cost: Micros;
  /** What the client pays, counted the same way. */
  price: Micros;
  /** The run length both were taken at when their units differ; null when compared unit for unit. */
  seconds: number | null;
}

/**
 * A route's cost beside a model's price, like with like, at the run length where the route does
 * worst. In one unit, the unit prices (a per-second cost above a per-second price loses at every
 * length). A per-second cost against a per-run price: the cost of the longest run the model makes
 * (`maxDurationSeconds`) against the price. A per-run cost against a per-second price: the cost
 * against the price of the shortest run billed (MIN_BILLED_SECONDS). The route loses money on
 * some run when `cost > price`.
 */
export function compareCostWithPrice(
  cost: UnitPrice,
  price: UnitPrice,
  maxDurationSeconds: number,
): CostComparison {
  if (cost.unit === price.unit) return { cost: cost.unitPrice, price: price.unitPrice, seconds: null };
  const seconds = cost.unit === "second" ? maxDurationSeconds : MIN_BILLED_SECONDS;
  return { cost: amountFor(cost, seconds), price: amountFor(price, seconds), seconds };
}
