import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey } from "../rows.js";

export async function updateApiKey(
  db: Database,
  id: string,
  patch: T.ApiKeyPatch,
): ReturnType<T.Store["updateApiKey"]> {
  const { rows } = await db.query(
    `update api_keys set name = coalesce($2, name), max_concurrency = coalesce($3, max_concurrency),
       rate_limit_per_minute = coalesce($4, rate_limit_per_minute), priority = coalesce($5, priority),
       budget = case when $6::boolean then $7::bigint else budget end,
       budget_period = case when $6::boolean then $8::text else budget_period end,
       budget_alert_level = case when $6::boolean then 0 else budget_alert_level end,
       budget_alert_period_start = case when $6::boolean then null else budget_alert_period_start end
     where id = $1 returning *`,
    [
      id,
      patch.name ?? null,
      patch.maxConcurrency ?? null,
      patch.rateLimitPerMinute ?? null,
      patch.priority ?? null,
      patch.budget !== undefined,
      patch.budget?.amount ?? null,
      patch.budget?.period ?? null,
    ],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}
