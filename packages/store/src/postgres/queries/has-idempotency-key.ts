import type * as T from "../../types.js";
import type { Queryable } from "../database.js";

export async function hasIdempotencyKey(
  db: Queryable,
  organizationId: string,
  key: string,
  now: Date,
): ReturnType<T.Store["hasIdempotencyKey"]> {
  const { rows } = await db.query(
    "select 1 from idempotency_keys where organization_id = $1 and key = $2 and expires_at > $3",
    [organizationId, key, now],
  );
  return rows.length > 0;
}
