/**
 * `GET /v1/usage`: the calling key's organization's usage, both environments and every key (as
 * `GET /v1/account` shows the whole organization's wallet), by day, model or key. The rows are
 * the operators' report for the organization (`admin-usage.ts`) without the vendors' cost and the
 * margin, which are the operator's business (docs/decisions.md, "Admin lists and usage").
 */
import type { components } from "@refvid/api-types";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { accountUsageGroupView, usageWindow } from "./usage-report.js";

type Schemas = components["schemas"];
export type AccountUsageGroupBy = Schemas["AccountUsageGroupBy"];

export interface AccountUsageRequest {
  /** `day` unless given. */
  groupBy?: AccountUsageGroupBy | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

export async function getAccountUsage(
  deps: AppDeps,
  caller: Caller,
  request: AccountUsageRequest,
): Promise<Schemas["AccountUsageReport"]> {
  const { from, to } = usageWindow(deps, request);
  const groupBy = request.groupBy ?? "day";
  const organizationId = caller.organization.id;
  const rows = await deps.store.usage({ from, to, groupBy, organizationId });
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    group_by: groupBy,
    organization_id: organizationId,
    data: rows.map(accountUsageGroupView),
  };
}
