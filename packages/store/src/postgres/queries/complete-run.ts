import { decideEnd, settleRun, settleSpend } from "@refvid/core";
import type * as T from "../../types.js";
import { webhookIdOf } from "../../webhook-id.js";
import type { Database, Queryable } from "../database.js";
import { type Row, toApiKey, toRun } from "../rows.js";
import { namedStatement } from "./named.js";
import { CHANNEL, eventPayload, json, NEXT_LEDGER_ID, RUN_COLUMNS } from "./sql.js";

/**
 * The end in one statement: the counters, the key's spend, the run, its charge's and release's
 * ledger entries, its webhook delivery (replacing its progress event not yet sent: the terminal one
 * carries the end) and the NOTIFY.
 */
const END_RUN = namedStatement<{
  run_id: string;
  status: T.RunRecord["status"];
  charged: number | null;
  billable_seconds: number | null;
  output: string | null;
  error: string | null;
  progress: number | null;
  route: string | null;
  vendor_cost: number | null;
  now: Date;
  released: number;
  wallet_charged: number;
  live_in_flight: number;
  test_in_flight: number;
  organization_id: string;
  key_in_flight: number;
  api_key_id: string;
  budget_reserved: number;
  spent_day: number;
  spent_day_start: Date;
  spent_week: number;
  spent_week_start: Date;
  spent_month: number;
  spent_month_start: Date;
  delivery_id: string;
  environment: T.Environment;
  webhook_url: string | null;
  event_type: string | null;
  delivers: boolean;
  channel: string;
  event: string;
}>(
  `with o as (update organizations set reserved = reserved - :released, balance = balance - :wallet_charged,
         total_spent = total_spent + :wallet_charged, in_flight = in_flight + :live_in_flight,
         test_in_flight = test_in_flight + :test_in_flight where id = :organization_id returning balance, reserved),
       k as (update api_keys set in_flight = in_flight + :key_in_flight, budget_reserved = :budget_reserved,
         spent_day = :spent_day, spent_day_start = :spent_day_start, spent_week = :spent_week,
         spent_week_start = :spent_week_start, spent_month = :spent_month, spent_month_start = :spent_month_start
         where id = :api_key_id),
       l as (insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, run_id, api_key_id, created_at)
         select ${NEXT_LEDGER_ID}, :organization_id::text, e.kind, e.amount, o.balance, o.reserved + e.unreleased,
           :run_id::text, :api_key_id::text, :now::timestamptz
         from o cross join (values (1, 'charge', -:wallet_charged::bigint, :released::bigint),
             (2, 'release', -:released::bigint, 0::bigint)) as e (ord, kind, amount, unreleased)
         where e.amount <> 0 order by e.ord),
       d as (insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, next_attempt_at, state)
         select :delivery_id::text, :run_id::text, :organization_id::text, :environment::text, :now::timestamptz,
           :webhook_url::text, :event_type::text, :now::timestamptz, 'pending'
         where :delivers::boolean),
       unsent as (delete from webhook_deliveries where run_id = :run_id::text and event_type = 'run.progress'
         and first_attempt_at is null and :delivers::boolean),
       r as (update runs set status = :status, charged = :charged, billable_seconds = :billable_seconds, output = :output,
         error = :error, progress = :progress, route = :route, vendor_cost = :vendor_cost, completed_at = :now, lease_owner = null, lease_expires_at = null
         where id = :run_id returning ${RUN_COLUMNS}),
       notified as (select pg_notify(:channel, :event))
   select r.*, (select count(*) from notified) as notified from r`,
);

/** Ends a run (see `RunStore.completeRun`); `origin` names this store in the NOTIFY it sends. */
export async function completeRun(
  db: Database,
  origin: string,
  input: {
    runId: string;
    outcome: T.RunOutcome;
    now: Date;
    organizationId?: string;
    environment?: T.Environment;
    leaseOwner?: string;
  },
): ReturnType<T.Store["completeRun"]> {
  return db.transaction((tx) => completeRunIn(tx, origin, input));
}

/**
 * The terminal transition in four round trips: begin; lock the run, then its organization, then its
 * key (the lateral subqueries need the run's row first; admission too locks organizations before
 * keys); core's decision and settlement; one statement for the organization's and key's counters,
 * the run, its ledger entries, its webhook delivery and the NOTIFY (`END_RUN`); commit. Both
 * statements are prepared once per connection.
 */
async function completeRunIn(
  tx: Queryable,
  origin: string,
  { runId, outcome, now, organizationId, environment, leaseOwner }: Parameters<T.Store["completeRun"]>[0],
): Promise<T.CompleteResult> {
  const found = await tx.query<{ run: Row; key: Row }>(
    `select to_jsonb(r) as run, to_jsonb(k) as key from (select * from runs where id = $1 for update) r
     cross join lateral (select id from organizations where id = r.organization_id for update) o
     cross join lateral (select * from api_keys where id = r.api_key_id for update) k`,
    [runId],
    "refvid_lock_run_and_key_end",
  );
  const row = found.rows[0];
  if (!row) return { kind: "not_found" };
  const run = toRun(row.run);
  const decision = decideEnd(run, { organizationId, environment, leaseOwner });
  if (!decision.ok)
    return decision.reason === "not_found" ? { kind: "not_found" } : { kind: decision.reason, run };

  const settled = settleRun(run, outcome);
  const spend = settleSpend(toApiKey(row.key).spend, settled.budgetReleased, settled.charged, now);
  const { rows } = await tx.query(
    END_RUN.text,
    END_RUN.values({
      run_id: runId,
      status: settled.status,
      charged: settled.charged,
      billable_seconds: settled.billableSeconds,
      output: outcome.status === "succeeded" ? json(outcome.output) : null,
      error: outcome.status === "succeeded" ? null : json(outcome.error),
      progress: settled.progress,
      route: outcome.route ?? null,
      vendor_cost: settled.vendorCost,
      now,
      released: settled.released,
      wallet_charged: settled.walletCharged,
      live_in_flight: settled.orgInFlight.live,
      test_in_flight: settled.orgInFlight.test,
      organization_id: run.organizationId,
      key_in_flight: settled.inFlightDelta,
      api_key_id: run.apiKeyId,
      budget_reserved: spend.reserved,
      spent_day: spend.day.spent,
      spent_day_start: spend.day.start,
      spent_week: spend.week.spent,
      spent_week_start: spend.week.start,
      spent_month: spend.month.spent,
      spent_month_start: spend.month.start,
      delivery_id: webhookIdOf(run.id),
      environment: run.environment,
      webhook_url: run.webhookUrl,
      event_type: settled.webhookEvent ?? null,
      delivers: Boolean(run.webhookUrl && settled.webhookEvent),
      channel: CHANNEL,
      event: eventPayload(origin, { kind: "ended", runId }),
    }),
    "refvid_complete_run",
  );
  return { kind: "completed", run: toRun(rows[0] as Row) };
}
