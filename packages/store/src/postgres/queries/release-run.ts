import type * as T from "../../types.js";
import type { Database } from "../database.js";

export async function releaseRun(
  db: Database,
  { runId, workerId }: Parameters<T.Store["releaseRun"]>[0],
): ReturnType<T.Store["releaseRun"]> {
  const { rows } = await db.query(
    `update runs set status = 'queued', lease_owner = null, lease_expires_at = null, provider = null,
       attempts = attempts - 1, started_at = case when attempts = 1 then null else started_at end
     where id = $1 and status = 'processing' and lease_owner = $2 returning id`,
    [runId, workerId],
  );
  return rows.length > 0;
}
