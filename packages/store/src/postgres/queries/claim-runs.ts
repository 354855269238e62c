import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";
import { notify } from "./sql.js";

export async function claimRuns(
  db: Database,
  { workerId, limit, leaseMs, now, skipEndpoints = [] }: Parameters<T.Store["claimRuns"]>[0],
): ReturnType<T.Store["claimRuns"]> {
  const { rows } = await db.query(
    `update runs set status = 'processing', started_at = coalesce(started_at, $2), lease_owner = $3,
       lease_expires_at = $4, attempts = attempts + 1
     where id in (select id from runs where status = 'queued' and endpoint <> all($5::text[])
                  order by created_at, id limit $1 for update skip locked)
     returning *`,
    [limit, now, workerId, new Date(now.getTime() + leaseMs), skipEndpoints],
  );
  if (rows.length > 0) await notify(db, { kind: "changed", runIds: rows.map((r) => String(r.id)) });
  return rows
    .map(toRun)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
}
