import type { RunRecord } from "../../types.js";
import type { Database } from "../database.js";
import { orError, toRun } from "../rows.js";
import { RUN_COLUMNS } from "./sql.js";

/**
 * Runs by id, in one statement (a run its row cannot be read as: the error); whose organization
 * may see each is the caller's to check.
 */
export async function getRuns(
  db: Database,
  runIds: readonly string[],
): Promise<Map<string, RunRecord | Error>> {
  const { rows } = await db.query(
    `select ${RUN_COLUMNS} from runs where id = any($1::text[])`,
    [runIds],
    "refvid_get_runs",
  );
  return new Map(rows.map((row) => [String(row.id), orError(() => toRun(row))]));
}
