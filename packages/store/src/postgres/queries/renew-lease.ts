import type * as T from "../../types.js";
import type { Database } from "../database.js";

export async function renewLease(
  db: Database,
  { runId, workerId, leaseMs, now }: Parameters<T.Store["renewLease"]>[0],
): ReturnType<T.Store["renewLease"]> {
  const { rows } = await db.query(
    "update runs set lease_expires_at = $3 where id = $1 and status = 'processing' and lease_owner = $2 returning id",
    [runId, workerId, new Date(now.getTime() + leaseMs)],
  );
  return rows.length > 0;
}
