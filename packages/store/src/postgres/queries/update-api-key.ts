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
       rate_limit_per_minute = coalesce($4, rate_limit_per_minute), priority = coalesce($5, priority)
     where id = $1 returning *`,
    [
      id,
      patch.name ?? null,
      patch.maxConcurrency ?? null,
      patch.rateLimitPerMinute ?? null,
      patch.priority ?? null,
    ],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}
