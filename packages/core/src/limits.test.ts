import { describe, expect, it } from "vitest";
import { NO_SPEND } from "./budgets.js";
import {
  type AdmissionState,
  admissionHold,
  admissionState,
  afterAdmission,
  concurrencyRemaining,
  countRequest,
  decideAdmission,
  RATE_WINDOW_MS,
} from "./limits.js";
import { MICROS_PER_USD } from "./money.js";
import { decideTopUp, MAX_LIFETIME_TOP_UPS, MAX_TOP_UP, tierFor } from "./tiers.js";

const base: AdmissionState = {
  keyLimit: 5,
  keyInFlight: 0,
  orgLimit: 10,
  orgInFlight: 0,
  available: 1_000_000,
  budget: null,
  spend: NO_SPEND,
  now: new Date("2026-11-26T12:00:00Z"),
};

describe("decideAdmission", () => {
  it.each<[string, Partial<AdmissionState>, number, unknown]>([
    ["admits within every limit", {}, 500_000, { ok: true }],
    ["admits a price equal to what is available", {}, 1_000_000, { ok: true }],
    [
      "refuses a key at its cap",
      { keyInFlight: 5 },
      1,
      { ok: false, reason: "api_key", limit: 5, inFlight: 5 },
    ],
    [
      "refuses an organization at its cap",
      { orgInFlight: 10 },
      1,
      { ok: false, reason: "organization", limit: 10, inFlight: 10 },
    ],
    [
      "reports the key first when both are full",
      { keyInFlight: 5, orgInFlight: 10 },
      1,
      { ok: false, reason: "api_key", limit: 5, inFlight: 5 },
    ],
    [
      "refuses a price above what is available",
      {},
      1_000_001,
      { ok: false, reason: "balance", required: 1_000_001, available: 1_000_000 },
    ],
    [
      "refuses a price past the key's budget before the wallet's",
      {
        budget: { amount: 2_000_000, period: "day" },
        spend: { ...NO_SPEND, day: { start: new Date("2026-11-26T00:00:00Z"), spent: 1_500_000 } },
      },
      1_000_001,
      {
        ok: false,
        reason: "budget",
        required: 1_000_001,
        budget: { amount: 2_000_000, period: "day" },
        spent: 1_500_000,
        reserved: 0,
        remaining: 500_000,
        periodStart: new Date("2026-11-26T00:00:00Z"),
        resetsAt: new Date("2026-11-27T00:00:00Z"),
      },
    ],
    [
      "refuses a key lowered below its runs in flight",
      { keyLimit: 2, keyInFlight: 3 },
      1,
      { ok: false, reason: "api_key", limit: 2, inFlight: 3 },
    ],
  ])("%s", (_name, patch, price, want) => {
    expect(decideAdmission({ ...base, ...patch }, price)).toEqual(want);
  });

  it.each([
    [{ keyInFlight: 0, orgInFlight: 0 }, 5],
    [{ keyInFlight: 2, orgInFlight: 8 }, 2],
    [{ keyInFlight: 7, orgInFlight: 0 }, 0],
  ])("leaves %j remaining %i", (patch, want) => {
    expect(concurrencyRemaining({ ...base, ...patch })).toBe(want);
  });
});

describe("countRequest", () => {
  it("allows up to the limit in one window, then refuses until it resets", () => {
    let window: ReturnType<typeof countRequest>["window"] | undefined;
    const results = [];
    for (let i = 0; i < 4; i++) {
      const decision = countRequest(window, 3, 1_000 + i);
      window = decision.window;
      results.push([decision.allowed, decision.remaining]);
    }
    expect(results).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    const later = countRequest(window, 3, 1_000 + RATE_WINDOW_MS);
    expect(later).toMatchObject({ allowed: true, remaining: 2, resetMs: RATE_WINDOW_MS });
  });

  it("reports the time left in the window", () => {
    const first = countRequest(undefined, 10, 5_000);
    expect(countRequest(first.window, 10, 20_000).resetMs).toBe(RATE_WINDOW_MS - 15_000);
  });
});

describe("tierFor", () => {
  it.each([
    [0, "starter", 10],
    [349_999_999, "starter", 10],
    [350_000_000, "growth", 25],
    [1_399_999_999, "growth", 25],
    [1_400_000_000, "pro", 50],
    [7_000_000_000, "scale", 100],
    [70_000_000_000, "scale", 100],
  ])("%i micros of top-ups is %s with %i runs", (micros, tier, concurrency) => {
    expect(tierFor(micros)).toEqual({ tier, concurrency });
  });
});

describe("decideTopUp", () => {
  it("adds within the lifetime cap and recomputes the tier", () => {
    expect(decideTopUp(300 * MICROS_PER_USD, 50 * MICROS_PER_USD)).toEqual({
      ok: true,
      lifetimeTopUps: 350 * MICROS_PER_USD,
      tier: "growth",
      concurrency: 25,
    });
    expect(decideTopUp(MAX_LIFETIME_TOP_UPS - 1, 1)).toMatchObject({
      ok: true,
      lifetimeTopUps: MAX_LIFETIME_TOP_UPS,
    });
  });

  it("refuses a top-up past the cap, which keeps every sum of money a safe integer", () => {
    expect(decideTopUp(MAX_LIFETIME_TOP_UPS, 1)).toEqual({
      ok: false,
      reason: "lifetime_cap",
      lifetimeTopUps: MAX_LIFETIME_TOP_UPS,
      max: MAX_LIFETIME_TOP_UPS,
    });
    expect(Number.isSafeInteger(MAX_LIFETIME_TOP_UPS + MAX_TOP_UP)).toBe(true);
  });
});

const noBudget = { budget: null, spend: NO_SPEND };

describe("admissionState", () => {
  it("reads an organization and its key, and what admitting one more run leaves", () => {
    const state = admissionState(
      { concurrencyLimit: 10, inFlight: 3, testInFlight: 7, balance: 5_000_000, reserved: 1_000_000 },
      { maxConcurrency: 4, inFlight: 2, environment: "live", budget: null, spend: NO_SPEND },
      base.now,
    );
    expect(state).toEqual({
      keyLimit: 4,
      keyInFlight: 2,
      orgLimit: 10,
      orgInFlight: 3,
      available: 4_000_000,
      budget: null,
      spend: NO_SPEND,
      now: base.now,
    });
    expect(concurrencyRemaining(afterAdmission(state))).toBe(1);
  });

  it("gives a test key the organization's test count and no wallet: its runs are never refused for money", () => {
    const org = { concurrencyLimit: 10, inFlight: 3, testInFlight: 9, balance: 0, reserved: 0 };
    const state = admissionState(
      org,
      { ...noBudget, maxConcurrency: 4, inFlight: 2, environment: "test" },
      base.now,
    );
    expect(state).toMatchObject({ orgInFlight: 9, available: null });
    expect(decideAdmission(state, 1_000_000_000)).toEqual({ ok: true });
    expect(decideAdmission(afterAdmission(state), 1)).toEqual({
      ok: false,
      reason: "organization",
      limit: 10,
      inFlight: 10,
    });
    // The same organization's live key is refused for money, and sees only live runs in flight.
    const live = admissionState(
      org,
      { ...noBudget, maxConcurrency: 4, inFlight: 0, environment: "live" },
      base.now,
    );
    expect(decideAdmission(live, 1)).toEqual({ ok: false, reason: "balance", required: 1, available: 0 });
  });
});

describe("admissionHold", () => {
  it("holds a live run's price on the wallet and nothing for a test run, each in its own count", () => {
    expect(admissionHold("live", 500_000)).toEqual({
      reserved: 500_000,
      orgInFlight: { live: 1, test: 0 },
      budgetReserved: 500_000,
    });
    expect(admissionHold("test", 500_000)).toEqual({
      reserved: 0,
      orgInFlight: { live: 0, test: 1 },
      budgetReserved: 500_000,
    });
  });
});
