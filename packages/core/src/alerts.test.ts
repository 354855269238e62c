import { describe, expect, it } from "vitest";
import {
  alertPayload,
  balanceCrossings,
  budgetAlerts,
  DEFAULT_BALANCE_THRESHOLDS,
  rearmBalance,
  thresholdAmount,
} from "./alerts.js";
import { NO_SPEND } from "./budgets.js";

describe("wallet alerts", () => {
  const state = { thresholds: DEFAULT_BALANCE_THRESHOLDS, lastTopUp: 100_000_000, fired: [] as number[] };

  it("turns shares of the last top-up and fixed amounts into amounts", () => {
    expect(thresholdAmount({ percentOfLastTopUp: 20 }, 100_000_000)).toBe(20_000_000);
    expect(thresholdAmount({ percentOfLastTopUp: 5 }, 333)).toBe(16);
    expect(thresholdAmount({ amount: 7_500_000 }, 0)).toBe(7_500_000);
  });

  it.each<[string, number, number, number[], number[]]>([
    ["fires nothing above every threshold", 50_000_000, 30_000_000, [], []],
    ["fires the threshold the balance fell below", 25_000_000, 19_000_000, [20_000_000], [20_000_000]],
    [
      "fires both when one change falls below both",
      25_000_000,
      1_000_000,
      [20_000_000, 5_000_000],
      [20_000_000, 5_000_000],
    ],
    ["fires exactly at the edge: below, not at", 25_000_000, 20_000_000, [], []],
    ["fires nothing for a change already below", 19_000_000, 18_000_000, [], []],
  ])("%s", (_name, before, after, alerted, fired) => {
    const crossed = balanceCrossings(state, before, after);
    expect(crossed.alerts.map((a) => a.thresholdAmount)).toEqual(alerted);
    expect(crossed.fired).toEqual(fired);
  });

  it("fires once per crossing: not again until money lifts the balance back above", () => {
    const first = balanceCrossings(state, 21_000_000, 19_000_000);
    expect(first.alerts).toHaveLength(1);
    // A release lifts it above and a reservation takes it below again: still fired.
    const again = balanceCrossings({ ...state, fired: first.fired }, 20_500_000, 19_500_000);
    expect(again.alerts).toEqual([]);
    // A top-up lifts it above 20: armed again, and the next fall below fires.
    const armed = rearmBalance(first.fired, 60_000_000);
    expect(armed).toEqual([]);
    expect(balanceCrossings({ ...state, fired: armed }, 20_500_000, 19_500_000).alerts).toHaveLength(1);
    // A top-up that leaves it below keeps the threshold fired.
    expect(rearmBalance([20_000_000, 5_000_000], 10_000_000)).toEqual([20_000_000]);
  });

  it("has no threshold of 0: without a top-up, shares of it never fire", () => {
    expect(balanceCrossings({ ...state, lastTopUp: 0 }, 1, -1).alerts).toEqual([]);
  });
});

describe("budget alerts", () => {
  const now = new Date("2026-11-26T12:00:00Z");
  const today = new Date("2026-11-26T00:00:00Z");
  const budget = { amount: 1_000_000, period: "day" as const };
  const spend = (spent: number, reserved = 0) => ({ ...NO_SPEND, day: { start: today, spent }, reserved });
  const none = { level: 0 as const, periodStart: null };

  it.each<[string, number, number, string[]]>([
    ["fires nothing below 80 %", 700_000, 99_999, []],
    ["fires the threshold at 80 % of spend and holds", 600_000, 200_000, ["key.budget_threshold"]],
    [
      "fires both when one run takes it to 100 %",
      500_000,
      500_000,
      ["key.budget_threshold", "key.budget_exhausted"],
    ],
  ])("%s", (_name, spent, reserved, kinds) => {
    expect(budgetAlerts(budget, spend(spent, reserved), none, now).alerts.map((a) => a.kind)).toEqual(kinds);
  });

  it("fires each once a period, and again in the next", () => {
    const first = budgetAlerts(budget, spend(850_000), none, now);
    expect(first.state).toEqual({ level: 80, periodStart: today });
    expect(budgetAlerts(budget, spend(900_000), first.state, now).alerts).toEqual([]);
    const exhausted = budgetAlerts(budget, spend(900_000), first.state, now, true);
    expect(exhausted.alerts.map((a) => a.kind)).toEqual(["key.budget_exhausted"]);
    expect(budgetAlerts(budget, spend(1_000_000), exhausted.state, now, true).alerts).toEqual([]);
    const tomorrow = new Date("2026-11-27T09:00:00Z");
    const next = { ...NO_SPEND, day: { start: new Date("2026-11-27T00:00:00Z"), spent: 800_000 } };
    expect(budgetAlerts(budget, next, exhausted.state, tomorrow).alerts.map((a) => a.kind)).toEqual([
      "key.budget_threshold",
    ]);
  });

  it("fires nothing for a key without a budget", () => {
    expect(budgetAlerts(null, spend(1e12), none, now, true)).toEqual({ alerts: [], state: none });
  });
});

describe("alertPayload", () => {
  it("writes the event body with money as decimal strings", () => {
    const at = new Date("2026-11-26T12:00:00Z");
    const low = balanceCrossings(
      { thresholds: [{ amount: 5_000_000 }], lastTopUp: 0, fired: [] },
      6_000_000,
      4_716_000,
    ).alerts[0];
    expect(JSON.parse(alertPayload(low as never, "org_1", "live", at))).toEqual({
      type: "account.balance_low",
      timestamp: "2026-11-26T12:00:00.000Z",
      data: {
        organization_id: "org_1",
        environment: "live",
        available_usd: "4.716",
        threshold_usd: "5.00",
        threshold: { amount_usd: "5.00" },
      },
    });
  });
});
