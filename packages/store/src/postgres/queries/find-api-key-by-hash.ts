import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { orError, toApiKey, toOrganization } from "../rows.js";

type Found = NonNullable<Awaited<ReturnType<T.Store["findApiKeyByHash"]>>>;

/** Keys by the hash of their secret, each with its organization (or why its row cannot be read), in one statement. */
export async function findApiKeysByHash(
  db: Database,
  keyHashes: readonly string[],
): Promise<Map<string, Found | Error>> {
  const { rows } = await db.query<{ k: Record<string, unknown>; o: Record<string, unknown> }>(
    `select to_jsonb(k) as k, to_jsonb(o) as o from api_keys k join organizations o on o.id = k.organization_id
     where k.key_hash = any($1::text[])`,
    [keyHashes],
    "refvid_find_api_keys",
  );
  return new Map(
    rows.map((row) => [
      String(row.k.key_hash),
      orError(() => ({ apiKey: toApiKey(row.k), organization: toOrganization(row.o) })),
    ]),
  );
}
