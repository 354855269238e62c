/**
 * The admin API's usage report: the store adds the runs of a window up per group and environment
 * (one GROUP BY, or one pass in memory); this turns its sums into the report's figures.
 */
import type { components } from "@refvid/api-types";
import { formatUsd, InvalidRequestError, paysFromWallet } from "@refvid/core";
import type { UsageGroupBy, UsageRow } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { mustExist } from "./admin-lists.js";
import { parseInstant } from "./keyset-page.js";

type Schemas = components["schemas"];

const DAY_MS = 86_400_000;
/** The window when `from` is not given: this many days before `to`. */
export const USAGE_DEFAULT_DAYS = 30;
/** The longest window a report covers. */
export const USAGE_MAX_DAYS = 366;

export interface UsageRequest {
  groupBy: UsageGroupBy;
  from?: string | undefined;
  to?: string | undefined;
  organizationId?: string | undefined;
}

export async function getUsage(deps: AppDeps, request: UsageRequest): Promise<Schemas["UsageReport"]> {
  const to = parseInstant(request.to, "query.to") ?? deps.clock.now();
  const from =
    parseInstant(request.from, "query.from") ?? new Date(to.getTime() - USAGE_DEFAULT_DAYS * DAY_MS);
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
  const { organizationId } = request;
  if (organizationId !== undefined) await mustExist(deps, organizationId);
  const rows = await deps.store.usage({
    from,
    to,
    groupBy: request.groupBy,
    ...(organizationId !== undefined ? { organizationId } : {}),
  });
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    group_by: request.groupBy,
    organization_id: organizationId ?? null,
    data: rows.map(usageGroupView),
  };
}

function usageGroupView(row: UsageRow): Schemas["UsageGroup"] {
  const { runs } = row;
  const total = Object.values(runs).reduce((sum, n) => sum + n, 0);
  // Test runs are priced like live ones but never charged (docs/decisions.md, "Test keys"), so
  // the margin is taken on the spend: a test row earns nothing (docs/decisions.md, "Admin lists and usage").
  const spend = paysFromWallet(row.environment) ? row.charged : 0;
  return {
    group: row.group,
    environment: row.environment,
    runs: { total, ...runs },
    failures: runs.failed + runs.timeout,
    billed_seconds: row.billableSeconds,
    spend_usd: formatUsd(spend),
    priced_usd: formatUsd(row.charged),
    vendor_cost_usd: formatUsd(row.vendorCost),
    margin_usd: formatUsd(spend - row.vendorCost),
  };
}
