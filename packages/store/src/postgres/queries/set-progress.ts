import type { Database } from "../database.js";
import { CHANNEL, eventPayload } from "./sql.js";

/**
 * The `run.progress` event of a change to the processing run `set` (the CTE before it), when its
 * webhook asked for them: merged into the run's progress event not yet sent, else a new one due a
 * second after the first attempt of the run's last one. `$1` is the run, `$5` now.
 */
const PROGRESS_EVENT = `progress_event as (
     insert into webhook_deliveries (id, seq, run_id, organization_id, environment, created_at, url, event_type,
       next_attempt_at, state, state_at, state_progress, state_queue_position)
     select 'msg_' || substr(r.id, 5) || '_progress_' || n.seq, n.seq, r.id, r.organization_id, r.environment, $5,
       r.webhook_url, 'run.progress',
       greatest($5::timestamptz, (select max(p.first_attempt_at) + interval '1 second' from webhook_deliveries p
                                  where p.run_id = $1 and p.event_type = 'run.progress')),
       'pending', $5, r.progress, r.queue_position
     from set r cross join lateral (select nextval('webhook_deliveries_seq') as seq) n
     where r.webhook_url is not null and r.webhook_events @> '["progress"]'
     on conflict (run_id) where event_type = 'run.progress' and first_attempt_at is null
     do update set state_at = excluded.state_at, state_progress = excluded.state_progress,
       state_queue_position = excluded.state_queue_position)`;

const SET_RETURNING =
  "returning id, organization_id, environment, webhook_url, webhook_events, progress, queue_position";

/** Sets a processing run's progress; true when it was set (a run no longer processing is left). */
export async function setProgress(
  db: Database,
  origin: string,
  runId: string,
  progress: number,
  now: Date,
): Promise<boolean> {
  // One statement: the progress event and the NOTIFY go out only when a processing run's progress was set.
  const { rows } = await db.query(
    `with set as (update runs set progress = $2 where id = $1 and status = 'processing' ${SET_RETURNING}),
     ${PROGRESS_EVENT}
     select pg_notify($3, $4) from set`,
    [runId, progress, CHANNEL, eventPayload(origin, { kind: "changed", runIds: [runId] }), now],
  );
  return rows.length > 0;
}

/** Sets a processing run's vendor queue position; true when it changed. */
export async function setQueuePosition(
  db: Database,
  origin: string,
  runId: string,
  position: number | null,
  now: Date,
): Promise<boolean> {
  const { rows } = await db.query(
    `with set as (update runs set queue_position = $2::integer
       where id = $1 and status = 'processing' and queue_position is distinct from $2::integer ${SET_RETURNING}),
     ${PROGRESS_EVENT}
     select pg_notify($3, $4) from set`,
    [runId, position, CHANNEL, eventPayload(origin, { kind: "changed", runIds: [runId] }), now],
  );
  return rows.length > 0;
}
