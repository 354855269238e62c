/**
 * Organization tiers from lifetime top-ups (interface, "Limits" 1) and the key defaults
 * (interface, "Limits" 2 and 3).
 */
import type { components } from "@refvid/api-types";
import { MICROS_PER_USD, type Micros } from "./money.js";

export type Tier = components["schemas"]["Tier"];

/** Highest first, so the first tier whose threshold is met wins. */
export const TIERS: readonly { tier: Tier; minLifetimeTopUps: Micros; concurrency: number }[] = [
  { tier: "scale", minLifetimeTopUps: 7000 * MICROS_PER_USD, concurrency: 100 },
  { tier: "pro", minLifetimeTopUps: 1400 * MICROS_PER_USD, concurrency: 50 },
  { tier: "growth", minLifetimeTopUps: 350 * MICROS_PER_USD, concurrency: 25 },
  { tier: "starter", minLifetimeTopUps: 0, concurrency: 10 },
];

export function tierFor(lifetimeTopUps: Micros): { tier: Tier; concurrency: number } {
  const found = TIERS.find((t) => lifetimeTopUps >= t.minLifetimeTopUps) ?? TIERS[TIERS.length - 1];
  if (!found) throw new Error("no tiers defined");
  return { tier: found.tier, concurrency: found.concurrency };
}

export const DEFAULT_KEY_MAX_CONCURRENCY = 10;
export const DEFAULT_KEY_RATE_LIMIT_PER_MINUTE = 120;

/** The largest single top-up: 1 billion USD. */
export const MAX_TOP_UP: Micros = 1_000_000_000 * MICROS_PER_USD;
/**
 * The most an organization may ever be topped up: 5 billion USD. Balances, spend and lifetime
 * totals are bounded by it, so every sum of money stays a safe integer (below 2^53 micros).
 */
export const MAX_LIFETIME_TOP_UPS: Micros = 5_000_000_000 * MICROS_PER_USD;

export type TopUpDecision =
  | { ok: true; lifetimeTopUps: Micros; tier: Tier; concurrency: number }
  | { ok: false; reason: "lifetime_cap"; lifetimeTopUps: Micros; max: Micros };

/** Whether `amount` may be added to an organization with `lifetimeTopUps` so far, and its new tier. */
export function decideTopUp(lifetimeTopUps: Micros, amount: Micros): TopUpDecision {
  const after = lifetimeTopUps + amount;
  if (after > MAX_LIFETIME_TOP_UPS) {
    return { ok: false, reason: "lifetime_cap", lifetimeTopUps, max: MAX_LIFETIME_TOP_UPS };
  }
  return { ok: true, lifetimeTopUps: after, ...tierFor(after) };
}
