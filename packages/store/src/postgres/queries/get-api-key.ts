import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey } from "../rows.js";

export async function getApiKey(db: Database, id: string): ReturnType<T.Store["getApiKey"]> {
  const { rows } = await db.query("select * from api_keys where id = $1", [id]);
  return rows[0] ? toApiKey(rows[0]) : null;
}
