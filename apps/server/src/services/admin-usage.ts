/**
 * The admin API's usage report: the store adds the runs of a window up per group and environment
 * (one GROUP BY, or one pass in memory); this turns its sums into the report's figures, those an
 * organization sees of its own (`usage-report.ts`) and the vendors' cost and the margin.
 */
import type { components } from "@refvid/api-types";
import { formatUsd } from "@refvid/core";
import type { UsageGroupBy, UsageRow } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { mustExist } from "./admin-lists.js";
import { accountUsageGroupView, usageWindow, walletSpend } from "./usage-report.js";

type Schemas = components["schemas"];

export interface UsageRequest {
  groupBy: UsageGroupBy;
  from?: string | undefined;
  to?: string | undefined;
  organizationId?: string | undefined;
}

export async function getUsage(deps: AppDeps, request: UsageRequest): Promise<Schemas["UsageReport"]> {
  const { from, to } = usageWindow(deps, request);
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
  // The margin is taken on the spend, not the price: a test row earns nothing
  // (docs/decisions.md, "Admin lists and usage").
  return {
    ...accountUsageGroupView(row),
    vendor_cost_usd: formatUsd(row.vendorCost),
    margin_usd: formatUsd(walletSpend(row) - row.vendorCost),
  };
}
