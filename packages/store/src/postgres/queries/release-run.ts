import type * as T from "../../types.js";
import type { Database } from "../database.js";

/**
 * Undoes a claim: the run goes back to its place in the queue, and its organization gets back the
 * turn the claim took from it (the one before, or none), so it keeps its place in the fair share.
 */
export async function releaseRun(
  db: Database,
  { runId, workerId }: Parameters<T.Store["releaseRun"]>[0],
): ReturnType<T.Store["releaseRun"]> {
  const { rows } = await db.query(
    `with released as (
       update runs set status = 'queued', lease_owner = null, lease_expires_at = null, provider = null,
         attempts = attempts - 1, started_at = case when attempts = 1 then null else started_at end
       where id = $1 and status = 'processing' and lease_owner = $2 returning id, organization_id),
     turned as (
       update queue_turns t set turn = coalesce(t.previous_turn, t.turn), previous_turn = null
       from released where t.organization_id = released.organization_id)
     select id from released`,
    [runId, workerId],
  );
  return rows.length > 0;
}
