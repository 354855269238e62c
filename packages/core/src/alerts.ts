/**
 * Spend alerts (docs/decisions.md, "Budgets and the ledger"): webhook events to an organization's
 * alert URL when its wallet runs low (`account.balance_low`) and when a key's budget is 80 % used
 * (`key.budget_threshold`) or used up (`key.budget_exhausted`). Each fires once per crossing: a
 * wallet threshold fires when the available balance falls below it and is armed again only by a
 * top-up or a positive adjustment that lifts the balance back above it; a budget's alerts fire once
 * a period, armed again when the period or the budget changes.
 *
 * Only admission and operators' corrections lower the available balance or raise what a key spent
 * and holds (a run's end releases at least what it charges), so only they check for crossings.
 */
import { type BudgetStanding, budgetStanding, type KeyBudget, type KeySpend } from "./budgets.js";
import { formatUsd, type Micros } from "./money.js";

/** A wallet threshold: a share of the last top-up, or a fixed amount. */
export type BalanceThreshold = { percentOfLastTopUp: number } | { amount: Micros };

/** With no thresholds of its own, an organization is warned at 20 % and at 5 % of its last top-up. */
export const DEFAULT_BALANCE_THRESHOLDS: readonly BalanceThreshold[] = [
  { percentOfLastTopUp: 20 },
  { percentOfLastTopUp: 5 },
];

/** A threshold as an amount, given the last top-up. */
export const thresholdAmount = (threshold: BalanceThreshold, lastTopUp: Micros): Micros =>
  "amount" in threshold ? threshold.amount : Math.floor((lastTopUp * threshold.percentOfLastTopUp) / 100);

/** The wallet's alert state: the thresholds already fired since they were last armed, as amounts. */
export interface BalanceAlertState {
  thresholds: readonly BalanceThreshold[];
  lastTopUp: Micros;
  /** Amounts of the thresholds fired and not armed again. */
  fired: readonly Micros[];
}

export interface BalanceLowAlert {
  kind: "account.balance_low";
  threshold: BalanceThreshold;
  thresholdAmount: Micros;
  available: Micros;
}

/**
 * The thresholds the available balance fell below in a change from `before` to `after` that are
 * not fired yet (the lowest last), and the fired set after it.
 */
export function balanceCrossings(
  state: BalanceAlertState,
  before: Micros,
  after: Micros,
): { alerts: BalanceLowAlert[]; fired: Micros[] } {
  const fired = [...state.fired];
  const alerts: BalanceLowAlert[] = [];
  const byAmount = state.thresholds
    .map((threshold) => ({ threshold, amount: thresholdAmount(threshold, state.lastTopUp) }))
    .filter((t) => t.amount > 0)
    .sort((a, b) => b.amount - a.amount);
  for (const { threshold, amount } of byAmount) {
    if (after < amount && before >= amount && !fired.includes(amount)) {
      alerts.push({ kind: "account.balance_low", threshold, thresholdAmount: amount, available: after });
      fired.push(amount);
    }
  }
  return { alerts, fired };
}

/** After money comes in: the thresholds the available balance is back above are armed again. */
export function rearmBalance(fired: readonly Micros[], available: Micros): Micros[] {
  return fired.filter((amount) => available < amount);
}

/** A key's budget alerts: the level reached this period (0 none, 80, 100) and the period it is of. */
export interface BudgetAlertState {
  level: 0 | 80 | 100;
  periodStart: Date | null;
}

export interface BudgetAlert {
  kind: "key.budget_threshold" | "key.budget_exhausted";
  /** 80 or 100: the share of the budget spent and held. */
  percent: 80 | 100;
  standing: BudgetStanding;
}

/**
 * The budget alerts a key's spend and holds call for now: `key.budget_threshold` once they reach
 * 80 % of the budget, `key.budget_exhausted` once they reach all of it, or once a submit was refused
 * for the budget (`refused`); each once a period. The level after it, for the store to keep.
 */
export function budgetAlerts(
  budget: KeyBudget | null,
  spend: KeySpend,
  state: BudgetAlertState,
  now: Date,
  refused = false,
): { alerts: BudgetAlert[]; state: BudgetAlertState } {
  if (!budget) return { alerts: [], state };
  const standing = budgetStanding(budget, spend, now);
  const samePeriod = state.periodStart?.getTime() === standing.periodStart.getTime();
  const reached = samePeriod ? state.level : 0;
  const used = standing.spent + standing.reserved;
  const level: 0 | 80 | 100 =
    refused || used >= budget.amount ? 100 : used * 100 >= budget.amount * 80 ? 80 : 0;
  const alerts: BudgetAlert[] = [];
  if (level >= 80 && reached < 80) alerts.push({ kind: "key.budget_threshold", percent: 80, standing });
  if (level === 100 && reached < 100) alerts.push({ kind: "key.budget_exhausted", percent: 100, standing });
  const kept = Math.max(reached, level) as 0 | 80 | 100;
  return { alerts, state: { level: kept, periodStart: standing.periodStart } };
}

export type AlertType = BalanceLowAlert["kind"] | BudgetAlert["kind"];

/**
 * An alert's webhook body (the spec's `AccountAlertEvent`), fixed when the alert is raised so that
 * every attempt sends the same bytes, as a run's events do.
 */
export function alertPayload(
  alert: BalanceLowAlert | (BudgetAlert & { apiKeyId: string }),
  organizationId: string,
  environment: "live" | "test",
  at: Date,
): string {
  const data =
    alert.kind === "account.balance_low"
      ? {
          organization_id: organizationId,
          environment,
          available_usd: formatUsd(alert.available),
          threshold_usd: formatUsd(alert.thresholdAmount),
          threshold:
            "amount" in alert.threshold
              ? { amount_usd: formatUsd(alert.threshold.amount) }
              : { percent_of_last_top_up: alert.threshold.percentOfLastTopUp },
        }
      : {
          organization_id: organizationId,
          environment,
          api_key_id: alert.apiKeyId,
          percent: alert.percent,
          budget: {
            amount_usd: formatUsd(alert.standing.budget.amount),
            period: alert.standing.budget.period,
            spent_usd: formatUsd(alert.standing.spent),
            reserved_usd: formatUsd(alert.standing.reserved),
            remaining_usd: formatUsd(alert.standing.remaining),
            period_start: alert.standing.periodStart.toISOString(),
            resets_at: alert.standing.resetsAt.toISOString(),
          },
        };
  return JSON.stringify({ type: alert.kind, timestamp: at.toISOString(), data });
}
