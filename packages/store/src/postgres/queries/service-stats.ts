import type * as T from "../../types.js";
import type { Database } from "../database.js";

/**
 * One round trip of index reads: the queue from the `runs_queued` partial index, processing runs
 * from `runs_processing_by_provider`, pending deliveries from `webhook_deliveries_due`, and the
 * reservations from the organizations' counters (one row per organization, never per run).
 */
export async function serviceStats(db: Database): ReturnType<T.Store["serviceStats"]> {
  const { rows } = await db.query(
    `select (select count(*) from runs where status = 'queued') as queued,
       (select min(created_at) from runs where status = 'queued') as oldest_queued_at,
       (select count(*) from runs where status = 'processing') as processing,
       (select count(*) from webhook_deliveries where state = 'pending') as pending_webhooks,
       (select coalesce(sum(reserved), 0) from organizations) as reserved`,
  );
  const row = rows[0] ?? {};
  const oldest = row.oldest_queued_at;
  return {
    queuedRuns: Number(row.queued ?? 0),
    oldestQueuedAt: oldest === null || oldest === undefined ? null : new Date(oldest as string | Date),
    processingRuns: Number(row.processing ?? 0),
    pendingWebhooks: Number(row.pending_webhooks ?? 0),
    // A sum across organizations, for a gauge: exact to the micro-USD up to 9 billion USD.
    reserved: Number(row.reserved ?? 0),
  };
}
