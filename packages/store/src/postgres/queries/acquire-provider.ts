import type * as T from "../../types.js";
import type { Database } from "../database.js";

/** A provider's slots are counted under a lock on its name, so two processes cannot both take the last. */
export function acquireProvider(
  db: Database,
  { runId, workerId, provider, limit }: Parameters<T.Store["acquireProvider"]>[0],
): ReturnType<T.Store["acquireProvider"]> {
  return db.transaction(async (tx) => {
    if (limit !== undefined) {
      await tx.query("select pg_advisory_xact_lock(hashtextextended('refvid.provider:' || $1, 0))", [
        provider,
      ]);
      const { rows } = await tx.query<{ n: number }>(
        "select count(*)::int as n from runs where status = 'processing' and provider = $1 and id <> $2",
        [provider, runId],
      );
      if ((rows[0]?.n ?? 0) >= limit) return false;
    }
    const { rows } = await tx.query(
      "update runs set provider = $3 where id = $1 and status = 'processing' and lease_owner = $2 returning id",
      [runId, workerId, provider],
    );
    return rows.length > 0;
  });
}
