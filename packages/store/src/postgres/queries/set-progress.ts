import type { Database } from "../database.js";
import { CHANNEL, eventPayload } from "./sql.js";

/** Sets a processing run's progress; true when it was set (a run no longer processing is left). */
export async function setProgress(
  db: Database,
  origin: string,
  runId: string,
  progress: number,
): Promise<boolean> {
  // One statement: the NOTIFY goes out only when a processing run's progress was set.
  const { rows } = await db.query(
    `with set as (update runs set progress = $2 where id = $1 and status = 'processing' returning id)
     select pg_notify($3, $4) from set`,
    [runId, progress, CHANNEL, eventPayload(origin, { kind: "changed", runIds: [runId] })],
  );
  return rows.length > 0;
}
