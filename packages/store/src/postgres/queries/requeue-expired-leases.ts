import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";
import { notify } from "./sql.js";

export async function requeueExpiredLeases(
  db: Database,
  origin: string,
  { now, maxAttempts, limit }: Parameters<T.Store["requeueExpiredLeases"]>[0],
): ReturnType<T.Store["requeueExpiredLeases"]> {
  const requeued = await db.query<{ id: string }>(
    `update runs set status = 'queued', lease_owner = null, lease_expires_at = null, progress = null
     where id in (select id from runs where status = 'processing' and lease_expires_at <= $1 and attempts < $2
                  order by lease_expires_at limit $3 for update skip locked)
     returning id`,
    [now, maxAttempts, limit],
  );
  if (requeued.rows.length > 0) await notify(db, origin, { kind: "queued" });
  const exhausted = await db.query(
    "select * from runs where status = 'processing' and lease_expires_at <= $1 and attempts >= $2 order by lease_expires_at limit $3",
    [now, maxAttempts, limit],
  );
  return { requeued: requeued.rows.map((r) => r.id), exhausted: exhausted.rows.map(toRun) };
}
