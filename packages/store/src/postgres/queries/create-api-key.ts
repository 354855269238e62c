import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey } from "../rows.js";

export async function createApiKey(
  db: Database,
  input: Parameters<T.Store["createApiKey"]>[0],
): ReturnType<T.Store["createApiKey"]> {
  const { rows } = await db.query(
    `insert into api_keys (id, organization_id, name, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, created_at, priority, budget, budget_period)
     select $1, id, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12 from organizations where id = $2 returning *`,
    [
      input.id,
      input.organizationId,
      input.name,
      input.environment,
      input.keyHash,
      input.keyPrefix,
      input.maxConcurrency,
      input.rateLimitPerMinute,
      input.now,
      input.priority ?? "normal",
      input.budget?.amount ?? null,
      input.budget?.period ?? null,
    ],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}
