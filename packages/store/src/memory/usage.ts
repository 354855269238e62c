/** MemoryStore's usage report: one pass over the runs of the window, added up per group and environment. */
import { RUN_STATUSES } from "@refvid/core";
import type { RunRecord, UsageGroupBy, UsageRow } from "../types.js";

/** What a run is grouped by; Postgres's `usage` query says the same in SQL. */
const GROUP_OF: Record<UsageGroupBy, (run: RunRecord) => string> = {
  api_key: (run) => run.apiKeyId,
  model: (run) => run.endpoint,
  provider: (run) => run.provider ?? "unassigned",
  route: (run) => run.route ?? "unassigned",
  organization: (run) => run.organizationId,
  day: (run) => run.createdAt.toISOString().slice(0, 10),
};

export function tallyUsage(runs: Iterable<RunRecord>, groupBy: UsageGroupBy): UsageRow[] {
  const rows = new Map<string, UsageRow>();
  for (const run of runs) {
    const group = GROUP_OF[groupBy](run);
    const id = `${group}\u0000${run.environment}`;
    let row = rows.get(id);
    if (!row) {
      const counts = Object.fromEntries(RUN_STATUSES.map((status) => [status, 0]));
      row = {
        group,
        environment: run.environment,
        runs: counts as UsageRow["runs"],
        billableSeconds: 0,
        charged: 0,
        vendorCost: 0,
      };
      rows.set(id, row);
    }
    row.runs[run.status] += 1;
    row.billableSeconds += run.billableSeconds ?? 0;
    row.charged += run.charged ?? 0;
    row.vendorCost += run.vendorCost ?? 0;
  }
  // By code unit, as Postgres orders text `collate "C"`.
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...rows.values()].sort((a, b) => byText(a.group, b.group) || byText(a.environment, b.environment));
}
