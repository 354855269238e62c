import { tierFor } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

export async function createOrganization(
  db: Database,
  input: Parameters<T.Store["createOrganization"]>[0],
): ReturnType<T.Store["createOrganization"]> {
  const { tier, concurrency } = tierFor(0);
  const { rows } = await db.query(
    `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret, test_webhook_secret)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [
      input.id,
      input.name,
      input.now,
      tier,
      concurrency,
      input.webhookSecrets.live,
      input.webhookSecrets.test,
    ],
  );
  return toOrganization(rows[0] as Record<string, unknown>);
}
