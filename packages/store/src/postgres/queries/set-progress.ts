import type * as T from "../../types.js";
import type { Database } from "../database.js";

export async function setProgress(
  db: Database,
  runId: string,
  progress: number,
): ReturnType<T.Store["setProgress"]> {
  await db.query("update runs set progress = $2 where id = $1 and status = 'processing'", [runId, progress]);
}
