import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";

export async function getRun(
  db: Database,
  organizationId: string,
  runId: string,
): ReturnType<T.Store["getRun"]> {
  const { rows } = await db.query("select * from runs where id = $1 and organization_id = $2", [
    runId,
    organizationId,
  ]);
  return rows[0] ? toRun(rows[0]) : null;
}
