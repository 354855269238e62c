import { RUN_STATUSES } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { micros } from "../rows.js";

/** What a run is grouped by; MemoryStore's `tallyUsage` says the same in TypeScript. */
const GROUP_OF: Record<T.UsageGroupBy, string> = {
  api_key: "api_key_id",
  model: "endpoint",
  provider: "coalesce(provider, 'unassigned')",
  route: "coalesce(route, 'unassigned')",
  organization: "organization_id",
  day: "to_char(created_at at time zone 'UTC', 'YYYY-MM-DD')",
};

/**
 * The statement a usage report sends: one GROUP BY over the runs created in `[from, to)`, read
 * through an index bounded by the window (`runs_search` for one organization, its environments
 * listed so `created_at` bounds the scan; `runs_by_created` for all). Groups are ordered by code
 * point (`collate "C"`), as MemoryStore orders them. Exported so a test EXPLAINs exactly this.
 */
export function usageQuery(query: T.UsageQuery): { text: string; params: unknown[] } {
  const params: unknown[] = [query.from, query.to];
  const where = ["created_at >= $1", "created_at < $2"];
  if (query.organizationId !== undefined) {
    params.push(query.organizationId);
    where.push(`organization_id = $${params.length}`, "environment in ('live', 'test')");
  }
  const counts = RUN_STATUSES.map((s) => `count(*) filter (where status = '${s}')::integer as "${s}"`);
  const group = GROUP_OF[query.groupBy];
  const text = `select ${group} as "group", environment, ${counts.join(", ")},
      coalesce(sum(billable_seconds), 0)::bigint as billable_seconds, coalesce(sum(charged), 0)::bigint as charged,
      coalesce(sum(vendor_cost), 0)::bigint as vendor_cost
    from runs where ${where.join(" and ")}
    group by 1, 2 order by ${group} collate "C", environment`;
  return { text, params };
}

export async function usage(db: Database, query: T.UsageQuery): ReturnType<T.Store["usage"]> {
  const { text, params } = usageQuery(query);
  const { rows } = await db.query(text, params);
  return rows.map((r) => ({
    group: String(r.group),
    environment: r.environment as T.Environment,
    runs: Object.fromEntries(RUN_STATUSES.map((s) => [s, Number(r[s])])) as T.UsageRow["runs"],
    billableSeconds: Number(r.billable_seconds),
    charged: micros(r.charged, "sum(charged)"),
    vendorCost: micros(r.vendor_cost, "sum(vendor_cost)"),
  }));
}
