import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { json } from "./sql.js";

export async function recordUpstream(
  db: Database,
  { runId, workerId, upstream }: Parameters<T.Store["recordUpstream"]>[0],
): ReturnType<T.Store["recordUpstream"]> {
  const { rows } = await db.query(
    "update runs set upstream = $3 where id = $1 and status = 'processing' and lease_owner = $2 returning id",
    [runId, workerId, json(upstream)],
  );
  return rows.length > 0;
}
