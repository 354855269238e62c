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

/** Sets a processing run's vendor queue position; true when it changed. */
export async function setQueuePosition(
  db: Database,
  origin: string,
  runId: string,
  position: number | null,
): Promise<boolean> {
  const { rows } = await db.query(
    `with set as (update runs set queue_position = $2::integer
       where id = $1 and status = 'processing' and queue_position is distinct from $2::integer returning id)
     select pg_notify($3, $4) from set`,
    [runId, position, CHANNEL, eventPayload(origin, { kind: "changed", runIds: [runId] })],
  );
  return rows.length > 0;
}
