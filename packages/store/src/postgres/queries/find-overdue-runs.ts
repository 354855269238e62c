import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";
import { IN_FLIGHT_SQL } from "./sql.js";

export async function findOverdueRuns(
  db: Database,
  { createdBefore, limit }: Parameters<T.Store["findOverdueRuns"]>[0],
): ReturnType<T.Store["findOverdueRuns"]> {
  const { rows } = await db.query(
    `select * from runs where status in (${IN_FLIGHT_SQL}) and created_at < $1 order by created_at limit $2`,
    [createdBefore, limit],
  );
  return rows.map(toRun);
}
