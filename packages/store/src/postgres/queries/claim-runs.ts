import type * as T from "../../types.js";
import type { Database, Queryable } from "../database.js";
import { toRun } from "../rows.js";
import { CHANNEL, RUN_COLUMNS } from "./sql.js";

/**
 * Claims up to `limit` runs, one at a time in the fair-share order (core/fair-share.ts), each in
 * a transaction under one advisory lock: claims from every process are serialized, so each sees
 * the processing counts and turns the one before it left, and two workers keep the order one
 * would. A claim reads one `queue_counts` row per organization and model with runs waiting or
 * processing, then one index range of the chosen organization's queue: its cost does not grow
 * with the queue.
 */
export async function claimRuns(
  db: Database,
  origin: string,
  input: Parameters<T.Store["claimRuns"]>[0],
): ReturnType<T.Store["claimRuns"]> {
  const claimed: T.RunRecord[] = [];
  while (claimed.length < input.limit) {
    const run = await db.transaction((tx) => claimOne(tx, origin, input));
    if (!run) break;
    claimed.push(run);
  }
  return claimed;
}

async function claimOne(
  tx: Queryable,
  origin: string,
  { workerId, leaseMs, now, skipEndpoints = [], skipDownloads }: Parameters<T.Store["claimRuns"]>[0],
): Promise<T.RunRecord | null> {
  await tx.query(
    "select pg_advisory_xact_lock(hashtextextended('refvid.claim', 0))",
    [],
    "refvid_claim_lock",
  );
  // The statement: the organization whose turn it is (fewest processing for its weight, then
  // served least recently, never-served first; only organizations with a run this worker may take
  // count), its next run (highest priority, then oldest), the claim, the organization's new turn,
  // the `run.started` webhooks asked for (once per run: a run claimed again keeps its first) and
  // the `changed` NOTIFY that tells event streams the run started.
  const { rows } = await tx.query(
    `with eligible as (
       select c.organization_id,
         bool_or(c.queued > 0 and c.endpoint <> all($5::text[])
           and not (c.organization_id = any($8::text[]) and c.endpoint = any($9::text[]))) as waiting,
         sum(c.processing) as processing
       from queue_counts c where c.queued > 0 or c.processing > 0 group by c.organization_id),
     org as (
       select e.organization_id from eligible e
         join organizations o on o.id = e.organization_id
         left join queue_turns t on t.organization_id = e.organization_id
       where e.waiting
       order by e.processing::float8 / o.queue_weight, t.turn nulls first, e.organization_id
       limit 1),
     next as (
       select r.id from runs r where r.organization_id = (select organization_id from org) and r.status = 'queued'
         and r.endpoint <> all($5::text[]) and not (r.organization_id = any($8::text[]) and r.endpoint = any($9::text[]))
       order by r.priority desc, r.created_at, r.id limit $1 for update skip locked),
     claimed as (
       update runs set status = 'processing', started_at = coalesce(started_at, $2), lease_owner = $3,
         lease_expires_at = $4, attempts = attempts + 1
       where id = (select id from next)
       returning ${RUN_COLUMNS}),
     turned as (
       insert into queue_turns as t (organization_id, turn)
       select organization_id, nextval('queue_turn') from claimed
       on conflict (organization_id) do update set previous_turn = t.turn, turn = excluded.turn),
     started as (insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type,
         next_attempt_at, state, state_at, state_progress, state_queue_position)
       select 'msg_' || substr(id, 5) || '_started', id, organization_id, environment, $2, webhook_url, 'run.started',
         $2, 'pending', $2, progress, queue_position
       from claimed where webhook_url is not null and webhook_events @> '["started"]'
       on conflict (id) do nothing),
     notified as (select pg_notify($6, json_build_object('kind', 'changed', 'runIds', json_agg(id), 'origin', $7::text)::text)
                  from claimed having count(*) > 0)
     select claimed.*, (select count(*) from notified) as notified from claimed`,
    [
      1,
      now,
      workerId,
      new Date(now.getTime() + leaseMs),
      skipEndpoints,
      CHANNEL,
      origin,
      skipDownloads?.organizationIds ?? [],
      skipDownloads?.endpoints ?? [],
    ],
    "refvid_claim_run",
  );
  return rows[0] ? toRun(rows[0]) : null;
}
