import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey } from "../rows.js";

/** One organization's keys newest first through `api_keys_list`. Exported so a test EXPLAINs it. */
export function listApiKeysQuery(search: T.ApiKeySearch): { text: string; params: unknown[] } {
  const where = ["organization_id = $1"];
  const params: unknown[] = [search.organizationId];
  if (search.revoked !== undefined) where.push(`revoked_at is ${search.revoked ? "not null" : "null"}`);
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const text = `select * from api_keys where ${where.join(" and ")} order by created_at desc, id desc limit $${params.length}`;
  return { text, params };
}

export async function listApiKeys(db: Database, search: T.ApiKeySearch): ReturnType<T.Store["listApiKeys"]> {
  const { text, params } = listApiKeysQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toApiKey);
}
