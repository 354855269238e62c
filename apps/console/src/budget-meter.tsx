/**
 * A key's budget as a bar: what its runs spent this period, then what its runs in flight hold,
 * against the amount; and in words, with when the period resets. The account page shows the
 * calling key's, the operator's keys table each key's.
 */
import type { components } from "@refvid/api-types";
import { parseUsd } from "@refvid/core";
import { addUsd, usd } from "./money.js";

type BudgetStanding = components["schemas"]["BudgetStanding"];

const PERIOD: Record<BudgetStanding["period"], string> = {
  day: "today",
  week: "this week",
  month: "this month",
};
/** The period's name as a budget is set: `$50.00 a month`. */
export const PER_PERIOD: Record<BudgetStanding["period"], string> = {
  day: "a day",
  week: "a week",
  month: "a month",
};

/** When the period resets, in UTC (periods are UTC days, ISO weeks and months). */
export const resetsAt = (iso: string): string =>
  `${new Date(iso).toLocaleString(undefined, { timeZone: "UTC", dateStyle: "medium", timeStyle: "short" })} UTC`;

/** `part` of `whole` in percent, 0 to 100: a coordinate, so a float will do. */
function percent(part: string, whole: string): number {
  const [p, w] = [parseUsd(part) ?? 0, parseUsd(whole) ?? 0];
  return w <= 0 ? 100 : Math.min(100, Math.max(0, (p / w) * 100));
}

export function BudgetMeter({ budget, label }: { budget: BudgetStanding; label: string }) {
  const used = addUsd(budget.spent_usd, budget.reserved_usd) ?? budget.spent_usd;
  const spentWidth = percent(budget.spent_usd, budget.amount_usd);
  const heldWidth = Math.min(100 - spentWidth, percent(budget.reserved_usd, budget.amount_usd));
  const exhausted = (parseUsd(budget.remaining_usd) ?? 0) === 0;
  const words = `${usd(budget.spent_usd)} spent + ${usd(budget.reserved_usd)} held of ${usd(budget.amount_usd)} ${PERIOD[budget.period]}`;
  return (
    <div className="budget" data-exhausted={exhausted || undefined}>
      {/* biome-ignore lint/a11y/useSemanticElements: a <meter> draws one value; this bar shows spent and held apart */}
      <div
        className="budget-bar"
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={100}
        aria-valuenow={Math.round(percent(used, budget.amount_usd))}
        aria-valuetext={words}
      >
        <span className="budget-spent" style={{ width: `${spentWidth}%` }} />
        <span className="budget-held" style={{ width: `${heldWidth}%` }} />
      </div>
      <p className="budget-words">
        {words}, {usd(budget.remaining_usd)} left; resets {resetsAt(budget.resets_at)}.
      </p>
    </div>
  );
}
