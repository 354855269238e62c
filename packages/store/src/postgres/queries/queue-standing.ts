import { MAX_ARRIVALS_COUNTED } from "../../queue-types.js";
import type * as T from "../../types.js";
import type { Database } from "../database.js";

interface StandingRow {
  organization_id: string;
  endpoint: string;
  ahead: number;
  organizations: { id: string; weight: number; processing: number; queued: number; turn: string | null }[];
  running: string[] | null;
  arrivals: number;
  earliest: string | null;
}

/**
 * One statement: the run; its organization's runs of the same model ahead of it (one index range of
 * that organization's queue); every organization's processing count, queued count for the model,
 * weight and turn (one `queue_counts` row per organization and model); and when the runs holding the
 * capacity started (a partial index of processing runs); and the model's recent arrivals from
 * other organizations (an index range by model and time, cut off at MAX_ARRIVALS_COUNTED).
 */
export async function queueStanding(
  db: Database,
  { runId, provider, arrivalsSince }: Parameters<T.Store["queueStanding"]>[0],
): ReturnType<T.Store["queueStanding"]> {
  const { rows } = await db.query<StandingRow>(
    `with run as (select id, organization_id, endpoint, priority, created_at from runs where id = $1 and status = 'queued'),
     shares as (
       select c.organization_id, sum(c.processing)::int as processing,
         coalesce(sum(c.queued) filter (where c.endpoint = (select endpoint from run)), 0)::int as queued
       from queue_counts c where c.queued > 0 or c.processing > 0 group by c.organization_id)
     select run.organization_id, run.endpoint,
       (select count(*)::int from runs r
        where r.organization_id = run.organization_id and r.status = 'queued' and r.endpoint = run.endpoint
          and (r.priority > run.priority
               or (r.priority = run.priority and (r.created_at, r.id) < (run.created_at, run.id)))) as ahead,
       (select coalesce(json_agg(json_build_object('id', s.organization_id, 'weight', o.queue_weight,
                 'processing', s.processing, 'queued', s.queued, 'turn', t.turn::text)), '[]')
        from shares s join organizations o on o.id = s.organization_id
          left join queue_turns t on t.organization_id = s.organization_id
        where s.queued > 0 or s.organization_id = run.organization_id) as organizations,
       (select array_agg(p.started_at::text) from runs p
        where p.status = 'processing' and case when $2::text is null then p.endpoint = run.endpoint
                                               else p.provider = $2 end) as running,
       recent.arrivals, recent.earliest
     from run, lateral (select count(*)::int as arrivals, min(a.created_at)::text as earliest
       from (select a.created_at from runs a where a.endpoint = run.endpoint and a.created_at >= $3
               and a.organization_id <> run.organization_id order by a.created_at desc limit $4) a) recent`,
    [runId, provider ?? null, arrivalsSince, MAX_ARRIVALS_COUNTED],
    "refvid_queue_standing",
  );
  const row = rows[0];
  if (!row) return null;
  const shares = row.organizations.map((o) => ({
    organizationId: o.id,
    weight: Number(o.weight),
    processing: Number(o.processing),
    queued: Number(o.queued),
    lastTurn: o.turn === null ? null : Number(o.turn),
  }));
  const own = shares.find((s) => s.organizationId === row.organization_id);
  return {
    own: {
      organizationId: row.organization_id,
      weight: own?.weight ?? 1,
      processing: own?.processing ?? 0,
      lastTurn: own?.lastTurn ?? null,
    },
    aheadInOrganization: Number(row.ahead),
    others: shares.filter((s) => s.organizationId !== row.organization_id),
    runningSince: (row.running ?? []).filter(Boolean).map((at) => new Date(at)),
    arrivalsByOthers: {
      count: Number(row.arrivals),
      earliest: row.earliest === null ? null : new Date(row.earliest),
    },
  };
}

/** The sliding window: the last runs of a model that succeeded, by the index of recent successes. */
export async function recentDurations(
  db: Database,
  { endpoint, route, limit }: Parameters<T.Store["recentDurations"]>[0],
): ReturnType<T.Store["recentDurations"]> {
  const { rows } = await db.query<{ ms: string }>(
    `select (extract(epoch from completed_at - started_at) * 1000)::bigint::text as ms from runs
     where endpoint = $1 and status = 'succeeded' and started_at is not null and ($2::text is null or route = $2)
     order by completed_at desc limit $3`,
    [endpoint, route ?? null, limit],
    "refvid_recent_durations",
  );
  return rows.map((r) => Number(r.ms));
}
