import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { CHANNEL, json } from "./sql.js";

export async function setProgress(
  db: Database,
  runId: string,
  progress: number,
): ReturnType<T.Store["setProgress"]> {
  // One statement: the NOTIFY goes out only when a processing run's progress was set.
  await db.query(
    `with set as (update runs set progress = $2 where id = $1 and status = 'processing' returning id)
     select pg_notify($3, $4) from set`,
    [runId, progress, CHANNEL, json({ kind: "changed", runIds: [runId] } satisfies T.StoreEvent)],
  );
}
