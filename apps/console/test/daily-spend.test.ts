/** The account chart's days: its window, and each day's live spend and test price from the usage rows. */
import type { components } from "@refvid/api-types";
import { describe, expect, it } from "vitest";
import { barHeight, dailySpend, daysWindow, lastDays } from "../src/daily-spend.js";

type Row = components["schemas"]["AccountUsageGroup"];

const runs = { total: 1, queued: 0, processing: 0, succeeded: 1, failed: 0, timeout: 0, cancelled: 0 };
const row = (group: string, environment: Row["environment"], spend: string, priced: string): Row => ({
  group,
  environment,
  runs,
  failures: 0,
  billed_seconds: 4,
  spend_usd: spend,
  priced_usd: priced,
});
const report = (data: Row[]) => ({
  from: "2026-11-24T00:00:00.000Z",
  to: "2026-11-27T00:00:00.000Z",
  group_by: "day" as const,
  organization_id: "org_1",
  data,
});

describe("lastDays and daysWindow", () => {
  it("end with today, across a month's end, oldest first", () => {
    expect(lastDays("2026-12-01", 3)).toEqual(["2026-11-29", "2026-11-30", "2026-12-01"]);
  });
  it("ask from the first day's start to the end of today", () => {
    expect(daysWindow("2026-12-01", 3)).toEqual({
      from: "2026-11-29T00:00:00.000Z",
      to: "2026-12-02T00:00:00.000Z",
    });
  });
});

describe("dailySpend", () => {
  const days = ["2026-11-24", "2026-11-25", "2026-11-26"];
  it.each([
    ["no runs: every day at 0.00", [], ["0.00", "0.00", "0.00"], ["0.00", "0.00", "0.00"]],
    [
      "live spend and test price, each on its day",
      [row("2026-11-24", "live", "0.284", "0.284"), row("2026-11-26", "test", "0.00", "0.852")],
      ["0.284", "0.00", "0.00"],
      ["0.00", "0.00", "0.852"],
    ],
    [
      "a test row's spend and a live row's price beside its spend are not counted twice",
      [row("2026-11-25", "live", "1.10", "1.10"), row("2026-11-25", "test", "0.00", "0.30")],
      ["0.00", "1.10", "0.00"],
      ["0.00", "0.30", "0.00"],
    ],
    [
      "two rows of one day and environment add up exactly (0.1 + 0.2)",
      [row("2026-11-26", "live", "0.1", "0.1"), row("2026-11-26", "live", "0.2", "0.2")],
      ["0.00", "0.00", "0.30"],
      ["0.00", "0.00", "0.00"],
    ],
    [
      "a day outside the window is left out",
      [row("2026-11-23", "live", "9.00", "9.00")],
      ["0.00", "0.00", "0.00"],
      ["0.00", "0.00", "0.00"],
    ],
  ])("%s", (_name, rows, live, test) => {
    const got = dailySpend(report(rows as Row[]), days);
    expect(got.map((d) => d.day)).toEqual(days);
    expect(got.map((d) => d.live)).toEqual(live);
    expect(got.map((d) => d.test)).toEqual(test);
  });
});

describe("barHeight", () => {
  it.each([
    ["0.00", null],
    ["0.284", 0.284],
    ["1000025.50", 1000025.5],
  ])("draws %s as %s", (amount, want) => {
    expect(barHeight(amount)).toBe(want);
  });
});
