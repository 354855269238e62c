import { describe, expect, it } from "vitest";
import {
  type BudgetPeriod,
  budgetStanding,
  decideBudget,
  type KeySpend,
  NO_SPEND,
  periodEnd,
  periodStart,
  settleSpend,
  spentIn,
} from "./budgets.js";

const at = (iso: string) => new Date(iso);

describe("periodStart and periodEnd", () => {
  it.each<[BudgetPeriod, string, string, string]>([
    ["day", "2026-11-26T13:45:00Z", "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z"],
    ["day", "2026-11-26T00:00:00Z", "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z"],
    ["day", "2026-11-26T23:59:59.999Z", "2026-11-26T00:00:00Z", "2026-11-27T00:00:00Z"],
    // 2026-11-26 is a Thursday: its ISO week began on Monday the 23rd.
    ["week", "2026-11-26T13:45:00Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"],
    ["week", "2026-11-23T00:00:00Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"],
    // A Sunday belongs to the week that began six days before.
    ["week", "2026-11-29T23:59:59Z", "2026-11-23T00:00:00Z", "2026-11-30T00:00:00Z"],
    // A week across a month's and a year's end.
    ["week", "2027-01-01T08:00:00Z", "2026-12-28T00:00:00Z", "2027-01-04T00:00:00Z"],
    ["month", "2026-11-26T13:45:00Z", "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z"],
    ["month", "2026-12-31T23:59:59Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"],
    ["month", "2028-02-29T12:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"],
  ])("%s holding %s began %s and ends %s", (period, now, start, end) => {
    const began = periodStart(period, at(now));
    expect(began.toISOString()).toBe(at(start).toISOString());
    expect(periodEnd(period, began).toISOString()).toBe(at(end).toISOString());
  });
});

describe("spend over periods, on a manual clock", () => {
  it("counts a charge in each period, and a new period starts from nothing", () => {
    let spend: KeySpend = { ...NO_SPEND, reserved: 900_000 };
    // A run holding 0.90 USD ends on Thursday the 26th charged 0.60 USD.
    spend = settleSpend(spend, 900_000, 600_000, at("2026-11-26T10:00:00Z"));
    expect(spend.reserved).toBe(0);
    expect(spentIn(spend, "day", at("2026-11-26T23:00:00Z"))).toBe(600_000);
    // Friday: a new day, the same week and month.
    const friday = at("2026-11-27T01:00:00Z");
    expect(spentIn(spend, "day", friday)).toBe(0);
    expect(spentIn(spend, "week", friday)).toBe(600_000);
    spend = settleSpend({ ...spend, reserved: 200_000 }, 200_000, 200_000, friday);
    expect(spend.day).toEqual({ start: at("2026-11-27T00:00:00Z"), spent: 200_000 });
    expect(spend.week).toEqual({ start: at("2026-11-23T00:00:00Z"), spent: 800_000 });
    expect(spend.month).toEqual({ start: at("2026-11-01T00:00:00Z"), spent: 800_000 });
    // Monday the 30th begins a new week in the same month; December the 1st a new month.
    const monday = at("2026-11-30T00:00:00Z");
    expect(spentIn(spend, "week", monday)).toBe(0);
    expect(spentIn(spend, "month", monday)).toBe(800_000);
    expect(spentIn(spend, "month", at("2026-12-01T00:00:00Z"))).toBe(0);
  });

  it("releases what a run held whatever it is charged: nothing for a failure", () => {
    const spend = settleSpend({ ...NO_SPEND, reserved: 1_000_000 }, 400_000, 0, at("2026-11-26T10:00:00Z"));
    expect(spend.reserved).toBe(600_000);
    expect(spend.day.spent).toBe(0);
  });
});

describe("decideBudget", () => {
  const now = at("2026-11-26T12:00:00Z");
  const spentToday = (spent: number, reserved = 0): KeySpend => ({
    ...NO_SPEND,
    day: { start: at("2026-11-26T00:00:00Z"), spent },
    reserved,
  });
  const daily = { amount: 10_000_000, period: "day" as const };

  it.each<[string, KeySpend, number, boolean]>([
    ["admits within the budget", spentToday(2_000_000), 1_000_000, true],
    ["admits a price that reaches the budget exactly", spentToday(6_000_000, 3_000_000), 1_000_000, true],
    ["counts what runs in flight hold", spentToday(6_000_000, 3_000_001), 1_000_000, false],
    ["refuses once the period's spend is at the budget", spentToday(10_000_000), 1, false],
    [
      "forgets yesterday's spend",
      { ...NO_SPEND, day: { start: at("2026-11-25T00:00:00Z"), spent: 10_000_000 } },
      10_000_000,
      true,
    ],
  ])("%s", (_name, spend, price, ok) => {
    expect(decideBudget(daily, spend, price, now).ok).toBe(ok);
  });

  it("admits anything without a budget", () => {
    expect(decideBudget(null, spentToday(1e12), 1e9, now)).toEqual({ ok: true });
  });

  it("says what is spent, held and left, and when the period resets", () => {
    expect(decideBudget(daily, spentToday(9_000_000, 500_000), 1_000_000, now)).toEqual({
      ok: false,
      reason: "budget",
      required: 1_000_000,
      budget: daily,
      spent: 9_000_000,
      reserved: 500_000,
      remaining: 500_000,
      periodStart: at("2026-11-26T00:00:00Z"),
      resetsAt: at("2026-11-27T00:00:00Z"),
    });
  });

  it("shows a standing that never goes below nothing left", () => {
    const over = budgetStanding({ amount: 1_000_000, period: "month" }, spentToday(0, 5_000_000), now);
    expect(over.remaining).toBe(0);
    expect(over.resetsAt).toEqual(at("2026-12-01T00:00:00Z"));
  });
});
