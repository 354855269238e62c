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
