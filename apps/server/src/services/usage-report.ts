/**
 * What the operators' usage report (`GET /admin/v1/usage`) and an organization's own
 * (`GET /v1/usage`) share: the window and its rules, and the figures of a row. Both take them from
 * here, so an organization sees exactly the numbers the operator sees for it.
 */
import type { components } from "@refvid/api-types";
import { formatUsd, InvalidRequestError, type Micros, paysFromWallet } from "@refvid/core";
import type { UsageRow } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { parseInstant } from "./keyset-page.js";

type Schemas = components["schemas"];

const DAY_MS = 86_400_000;
/** The window when `from` is not given: this many days before `to`. */
export const USAGE_DEFAULT_DAYS = 30;
/** The longest window a report covers. */
export const USAGE_MAX_DAYS = 366;

export interface UsageWindow {
  from: Date;
  to: Date;
}

/**
 * The window `[from, to)` of a report from the query's `from` and `to`: `to` defaults to now,
 * `from` to 30 days before `to`; `from` must be before `to`, at most 366 days apart. A bad one is
 * a 400 naming the field.
 */
export function usageWindow(
  deps: AppDeps,
  query: { from?: string | undefined; to?: string | undefined },
): UsageWindow {
  const to = parseInstant(query.to, "query.to") ?? deps.clock.now();
  const from = parseInstant(query.from, "query.from") ?? new Date(to.getTime() - USAGE_DEFAULT_DAYS * DAY_MS);
  if (from >= to) {
    throw new InvalidRequestError([
      { field: "query.from", message: `must be before to (${to.toISOString()})`, rule: "range" },
    ]);
  }
  if (to.getTime() - from.getTime() > USAGE_MAX_DAYS * DAY_MS) {
    throw new InvalidRequestError([
      { field: "query.from", message: `must be at most ${USAGE_MAX_DAYS} days before to`, rule: "range" },
    ]);
  }
  return { from, to };
}

/**
 * What the wallet paid for a row's runs. Test runs are priced like live ones but never charged
 * (docs/decisions.md, "Test keys"): a test row spends nothing.
 */
export function walletSpend(row: UsageRow): Micros {
  return paysFromWallet(row.environment) ? row.charged : 0;
}

/** A row's figures as an organization sees them: runs, failures, seconds, spend and price. */
export function accountUsageGroupView(row: UsageRow): Schemas["AccountUsageGroup"] {
  const { runs } = row;
  const total = Object.values(runs).reduce((sum, n) => sum + n, 0);
  return {
    group: row.group,
    environment: row.environment,
    runs: { total, ...runs },
    failures: runs.failed + runs.timeout,
    billed_seconds: row.billableSeconds,
    spend_usd: formatUsd(walletSpend(row)),
    priced_usd: formatUsd(row.charged),
  };
}
