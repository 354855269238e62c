import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

export async function getOrganization(db: Database, id: string): ReturnType<T.Store["getOrganization"]> {
  const { rows } = await db.query("select * from organizations where id = $1", [id]);
  return rows[0] ? toOrganization(rows[0]) : null;
}
