import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey, toOrganization } from "../rows.js";

export async function findApiKeyByHash(
  db: Database,
  keyHash: string,
): ReturnType<T.Store["findApiKeyByHash"]> {
  const { rows } = await db.query<{ k: Record<string, unknown>; o: Record<string, unknown> }>(
    `select to_jsonb(k) as k, to_jsonb(o) as o from api_keys k join organizations o on o.id = k.organization_id
     where k.key_hash = $1`,
    [keyHash],
  );
  const row = rows[0];
  return row ? { apiKey: toApiKey(row.k), organization: toOrganization(row.o) } : null;
}
