import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey } from "../rows.js";

export async function revokeApiKey(db: Database, id: string, now: Date): ReturnType<T.Store["revokeApiKey"]> {
  const { rows } = await db.query(
    "update api_keys set revoked_at = coalesce(revoked_at, $2) where id = $1 returning *",
    [id, now],
  );
  return rows[0] ? toApiKey(rows[0]) : null;
}
