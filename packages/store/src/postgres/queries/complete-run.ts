import { decideEnd, settleRun } from "@refvid/core";
import type * as T from "../../types.js";
import { webhookIdOf } from "../../webhook-id.js";
import type { Database, Queryable } from "../database.js";
import { type Row, toRun } from "../rows.js";
import { CHANNEL, json, RUN_COLUMNS } from "./sql.js";

export async function completeRun(
  db: Database,
  input: {
    runId: string;
    outcome: T.RunOutcome;
    now: Date;
    organizationId?: string;
    environment?: T.Environment;
    leaseOwner?: string;
  },
): ReturnType<T.Store["completeRun"]> {
  return db.transaction((tx) => completeRunIn(tx, input));
}

/**
 * The terminal transition in four round trips: begin; lock the run, then its organization (the
 * organization's lateral subquery needs the run's row first); core's decision and settlement; one
 * statement for the organization's and key's counters, the run, its webhook delivery and the
 * NOTIFY; commit. Both statements are prepared once per connection.
 */
async function completeRunIn(
  tx: Queryable,
  { runId, outcome, now, organizationId, environment, leaseOwner }: Parameters<T.Store["completeRun"]>[0],
): Promise<T.CompleteResult> {
  const found = await tx.query<{ run: Row }>(
    `select to_jsonb(r) as run from (select * from runs where id = $1 for update) r
     cross join lateral (select id from organizations where id = r.organization_id for update) o`,
    [runId],
    "refvid_lock_run_end",
  );
  const row = found.rows[0];
  if (!row) return { kind: "not_found" };
  const run = toRun(row.run);
  const decision = decideEnd(run, { organizationId, environment, leaseOwner });
  if (!decision.ok)
    return decision.reason === "not_found" ? { kind: "not_found" } : { kind: decision.reason, run };

  const settled = settleRun(run, outcome);
  const delivers = Boolean(run.webhookUrl && settled.webhookEvent);
  const { rows } = await tx.query(
    `with o as (update organizations set reserved = reserved - $9, balance = balance - $10, total_spent = total_spent + $10,
           in_flight = in_flight + $11, test_in_flight = test_in_flight + $12 where id = $13),
         k as (update api_keys set in_flight = in_flight + $14 where id = $15),
         d as (insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, next_attempt_at, state)
           select $16::text, $1::text, $13::text, $17::text, $8::timestamptz, $18::text, $19::text, $8::timestamptz, 'pending'
           where $20::boolean),
         r as (update runs set status = $2, charged = $3, billable_seconds = $4, output = $5, error = $6, progress = $7,
           completed_at = $8, lease_owner = null, lease_expires_at = null where id = $1 returning ${RUN_COLUMNS}),
         notified as (select pg_notify($21, $22))
     select r.*, (select count(*) from notified) as notified from r`,
    [
      runId,
      settled.status,
      settled.charged,
      settled.billableSeconds,
      outcome.status === "succeeded" ? json(outcome.output) : null,
      outcome.status === "succeeded" ? null : json(outcome.error),
      settled.progress,
      now,
      settled.released,
      settled.walletCharged,
      settled.orgInFlight.live,
      settled.orgInFlight.test,
      run.organizationId,
      settled.inFlightDelta,
      run.apiKeyId,
      webhookIdOf(run.id),
      run.environment,
      run.webhookUrl,
      settled.webhookEvent ?? null,
      delivers,
      CHANNEL,
      json({ kind: "ended", runId } satisfies T.StoreEvent),
    ],
    "refvid_complete_run",
  );
  return { kind: "completed", run: toRun(rows[0] as Row) };
}
