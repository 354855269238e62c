/**
 * The account chart's figures: one entry per UTC day of its window, what live runs took from the
 * wallet and what test runs were priced at, from `GET /v1/usage?group_by=day`. Amounts stay
 * decimal strings, added in integer micro-USD; only the chart's coordinates are floats.
 */
import type { components } from "@refvid/api-types";
import { MICROS_PER_USD, parseUsd } from "@refvid/core";
import { sumUsd } from "./money.js";
import { addDays, usageWindow } from "./usage.js";

type AccountUsageReport = components["schemas"]["AccountUsageReport"];

/** The bars' colours: the console's accent for the wallet's money, amber for test runs (as their tag). */
export const CHART_COLORS = { live: "#1f5fd1", test: "#c98a00" } as const;

/** One day of the chart. */
export interface DaySpend {
  /** The UTC date, `2026-11-26`. */
  day: string;
  /** What the day's live runs took from the wallet (`spend_usd`). */
  live: string;
  /** What the day's test runs were priced at (`priced_usd`); they took nothing. */
  test: string;
}

/** The `days` UTC dates that end with `today`, oldest first. */
export function lastDays(today: string, days: number): string[] {
  return Array.from({ length: days }, (_, i) => addDays(today, i - days + 1));
}

/** The usage window of those days: from the first one's start to the end of `today`. */
export function daysWindow(today: string, days: number): { from: string; to: string } {
  return usageWindow(addDays(today, 1 - days), today);
}

/**
 * Each of `days` with its live spend and test price ("0.00" on a day without runs). Rows of days
 * outside `days` are left out; a day's rows of one environment are added up.
 */
export function dailySpend(report: AccountUsageReport, days: readonly string[]): DaySpend[] {
  const figures = (day: string, environment: "live" | "test") =>
    report.data
      .filter((row) => row.group === day && row.environment === environment)
      .map((row) => (environment === "live" ? row.spend_usd : row.priced_usd));
  return days.map((day) => ({ day, live: sumUsd(figures(day, "live")), test: sumUsd(figures(day, "test")) }));
}

/** An amount as a chart coordinate, in USD; null for zero, so that no bar is drawn. */
export function barHeight(amount: string): number | null {
  const micros = parseUsd(amount) ?? 0;
  return micros === 0 ? null : micros / MICROS_PER_USD;
}
