/**
 * Per-key spend budgets (docs/decisions.md, "Budgets and the ledger"). A key may have a budget of
 * so many micro-USD per UTC day, ISO week (from Monday) or calendar month. What a key spends is
 * kept for all three periods whether or not it has a budget, so a budget set mid-month counts what
 * the key already spent that month. A run's price is held against the budget while it is in flight
 * (as against the wallet) and its charge counts in the period the run ends in. Test keys have
 * budgets too, counted on what their runs are priced at.
 */
import type { Micros } from "./money.js";

export const BUDGET_PERIODS = ["day", "week", "month"] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

export interface KeyBudget {
  amount: Micros;
  period: BudgetPeriod;
}

/** A key's spend in one period: what its runs that ended since `start` were charged. */
export interface PeriodSpend {
  start: Date;
  spent: Micros;
}

/** What a key has spent, per period, and what its runs in flight hold (their prices). */
export interface KeySpend {
  day: PeriodSpend | null;
  week: PeriodSpend | null;
  month: PeriodSpend | null;
  reserved: Micros;
}

export const NO_SPEND: KeySpend = { day: null, week: null, month: null, reserved: 0 };

const DAY_MS = 86_400_000;

/** When the period holding `now` began: UTC midnight, Monday's UTC midnight, the 1st's UTC midnight. */
export function periodStart(period: BudgetPeriod, now: Date): Date {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  if (period === "month") return new Date(Date.UTC(y, m, 1));
  const midnight = Date.UTC(y, m, d);
  if (period === "day") return new Date(midnight);
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  return new Date(midnight - sinceMonday * DAY_MS);
}

/** When the period that began at `start` ends (the next one begins). */
export function periodEnd(period: BudgetPeriod, start: Date): Date {
  if (period === "month") return new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1));
  return new Date(start.getTime() + (period === "day" ? DAY_MS : 7 * DAY_MS));
}

/** What the key spent in the period holding `now`: nothing if its counter is of an earlier period. */
export function spentIn(spend: KeySpend, period: BudgetPeriod, now: Date): Micros {
  const counter = spend[period];
  return counter && counter.start.getTime() === periodStart(period, now).getTime() ? counter.spent : 0;
}

/** The counters after a run that held `released` ends charged `charged` at `now`. */
export function settleSpend(
  spend: KeySpend,
  released: Micros,
  charged: Micros,
  now: Date,
): KeySpend & Record<BudgetPeriod, PeriodSpend> {
  const add = (period: BudgetPeriod): PeriodSpend => ({
    start: periodStart(period, now),
    spent: spentIn(spend, period, now) + charged,
  });
  return { day: add("day"), week: add("week"), month: add("month"), reserved: spend.reserved - released };
}

/** Where a key stands against its budget at `now`. */
export interface BudgetStanding {
  budget: KeyBudget;
  spent: Micros;
  reserved: Micros;
  /** amount − spent − reserved; never below 0. */
  remaining: Micros;
  periodStart: Date;
  resetsAt: Date;
}

export function budgetStanding(budget: KeyBudget, spend: KeySpend, now: Date): BudgetStanding {
  const start = periodStart(budget.period, now);
  const spent = spentIn(spend, budget.period, now);
  return {
    budget,
    spent,
    reserved: spend.reserved,
    remaining: Math.max(0, budget.amount - spent - spend.reserved),
    periodStart: start,
    resetsAt: periodEnd(budget.period, start),
  };
}

export type BudgetDecision =
  | { ok: true }
  | ({ ok: false; reason: "budget"; required: Micros } & BudgetStanding);

/**
 * Whether a run priced `price` fits the key's budget: what the key spent this period, what its
 * runs in flight hold and the price together may not pass the budget. No budget: always.
 */
export function decideBudget(
  budget: KeyBudget | null,
  spend: KeySpend,
  price: Micros,
  now: Date,
): BudgetDecision {
  if (!budget) return { ok: true };
  const standing = budgetStanding(budget, spend, now);
  if (standing.spent + standing.reserved + price <= budget.amount) return { ok: true };
  return { ok: false, reason: "budget", required: price, ...standing };
}
