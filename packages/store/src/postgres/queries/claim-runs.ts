import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";
import { CHANNEL, RUN_COLUMNS } from "./sql.js";

export async function claimRuns(
  db: Database,
  origin: string,
  { workerId, limit, leaseMs, now, skipEndpoints = [], skipDownloads }: Parameters<T.Store["claimRuns"]>[0],
): ReturnType<T.Store["claimRuns"]> {
  // One statement: the claim, the `run.started` events asked for (once per run: a run claimed
  // again keeps its first), and the `changed` NOTIFY that tells event streams the runs started.
  const { rows } = await db.query(
    `with claimed as (
       update runs set status = 'processing', started_at = coalesce(started_at, $2), lease_owner = $3,
         lease_expires_at = $4, attempts = attempts + 1
       where id in (select id from runs where status = 'queued' and endpoint <> all($5::text[])
                      and not (organization_id = any($8::text[]) and endpoint = any($9::text[]))
                    order by created_at, id limit $1 for update skip locked)
       returning ${RUN_COLUMNS}),
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
      limit,
      now,
      workerId,
      new Date(now.getTime() + leaseMs),
      skipEndpoints,
      CHANNEL,
      origin,
      skipDownloads?.organizationIds ?? [],
      skipDownloads?.endpoints ?? [],
    ],
    "refvid_claim_runs",
  );
  return rows
    .map(toRun)
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
}
