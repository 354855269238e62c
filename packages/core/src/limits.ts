/**
 * Limit arithmetic shared by every store (interface, "Limits"): the admission decision over the
 * key cap, the organization cap and the wallet, and the per-key fixed-window rate limit.
 */
import { type BudgetDecision, decideBudget, type KeyBudget, type KeySpend } from "./budgets.js";
import { type Environment, type InFlightDelta, inFlightDelta, paysFromWallet } from "./environments.js";
import type { Micros } from "./money.js";

export interface AdmissionState {
  keyLimit: number;
  keyInFlight: number;
  orgLimit: number;
  /** The organization's runs in flight in the key's environment. */
  orgInFlight: number;
  /** balance - reserved; null for a test key, whose runs take nothing from the wallet. */
  available: Micros | null;
  /** The key's budget (none: null), what it has spent and holds, and the time it is judged at. */
  budget: KeyBudget | null;
  spend: KeySpend;
  now: Date;
}

/** The admission state of an organization and one of its keys, as the stores keep them. */
export function admissionState(
  org: {
    concurrencyLimit: number;
    inFlight: number;
    testInFlight: number;
    balance: Micros;
    reserved: Micros;
  },
  key: {
    maxConcurrency: number;
    inFlight: number;
    environment: Environment;
    budget: KeyBudget | null;
    spend: KeySpend;
  },
  now: Date,
): AdmissionState {
  const live = paysFromWallet(key.environment);
  return {
    keyLimit: key.maxConcurrency,
    keyInFlight: key.inFlight,
    orgLimit: org.concurrencyLimit,
    orgInFlight: live ? org.inFlight : org.testInFlight,
    available: live ? org.balance - org.reserved : null,
    budget: key.budget,
    spend: key.spend,
    now,
  };
}

/** What admitting a run priced `price` holds: the wallet reservation and the in-flight counts. */
export interface AdmissionHold {
  /** Added to the organization's reservation: the price for a live run, 0 for a test run. */
  reserved: Micros;
  /** Added to the organization's in-flight counts (the key's count goes up by one). */
  orgInFlight: InFlightDelta;
  /** Added to what the key's runs in flight hold against its budget: the price, in either environment. */
  budgetReserved: Micros;
}

export const admissionHold = (environment: Environment, price: Micros): AdmissionHold => ({
  reserved: paysFromWallet(environment) ? price : 0,
  orgInFlight: inFlightDelta(environment, 1),
  budgetReserved: price,
});

/** What admitting one more run leaves: the key may start `concurrencyRemaining` more. */
export const afterAdmission = (state: AdmissionState): AdmissionState => ({
  ...state,
  keyInFlight: state.keyInFlight + 1,
  orgInFlight: state.orgInFlight + 1,
});

export type AdmissionDecision =
  | { ok: true }
  | { ok: false; reason: "api_key" | "organization"; limit: number; inFlight: number }
  | { ok: false; reason: "balance"; required: Micros; available: Micros }
  | Exclude<BudgetDecision, { ok: true }>;

/**
 * Whether a run costing `price` may be admitted. The key's cap is checked first (then the
 * organization's cap, then the key's budget, then the balance), so a key at its own cap learns
 * that even when the organization is also full.
 */
export function decideAdmission(state: AdmissionState, price: Micros): AdmissionDecision {
  if (state.keyInFlight >= state.keyLimit) {
    return { ok: false, reason: "api_key", limit: state.keyLimit, inFlight: state.keyInFlight };
  }
  if (state.orgInFlight >= state.orgLimit) {
    return { ok: false, reason: "organization", limit: state.orgLimit, inFlight: state.orgInFlight };
  }
  const budget = decideBudget(state.budget, state.spend, price, state.now);
  if (!budget.ok) return budget;
  if (state.available !== null && price > state.available)
    return { ok: false, reason: "balance", required: price, available: state.available };
  return { ok: true };
}

/** Runs the key may still start now: the smaller of its own and its organization's headroom. */
export function concurrencyRemaining(
  state: Pick<AdmissionState, "keyLimit" | "keyInFlight" | "orgLimit" | "orgInFlight">,
): number {
  return Math.max(0, Math.min(state.keyLimit - state.keyInFlight, state.orgLimit - state.orgInFlight));
}

export const RATE_WINDOW_MS = 60_000;

/** A key's current rate window: when it started and how many requests it has counted. */
export interface RateWindow {
  windowStart: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
  window: RateWindow;
}

/**
 * Counts one request against a fixed window of RATE_WINDOW_MS that starts at the key's first
 * request after the previous window ended. Rejected requests are counted too, so a client that
 * hammers through a 429 does not get a fresh allowance sooner.
 */
export function countRequest(previous: RateWindow | undefined, limit: number, now: number): RateDecision {
  const fresh = !previous || now - previous.windowStart >= RATE_WINDOW_MS;
  const window = fresh
    ? { windowStart: now, count: 1 }
    : { windowStart: previous.windowStart, count: previous.count + 1 };
  return {
    allowed: window.count <= limit,
    limit,
    remaining: Math.max(0, limit - window.count),
    resetMs: window.windowStart + RATE_WINDOW_MS - now,
    window,
  };
}
