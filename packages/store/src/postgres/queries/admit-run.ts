import {
  admissionHold,
  admissionState,
  afterAdmission,
  concurrencyRemaining,
  DEFAULT_WEBHOOK_EVENTS,
  decideAdmission,
  decideIdempotency,
  type IdempotencyRecord,
  PRIORITY_RANK,
} from "@refvid/core";
import { keyAlerts, type NewAlertDelivery, walletAlerts } from "../../alert-deliveries.js";
import type * as T from "../../types.js";
import type { Database, Queryable } from "../database.js";
import { type Row, toApiKey, toIdempotencyRecord, toOrganization, toRun } from "../rows.js";
import { writeAlerts } from "./alerts.js";
import { CHANNEL, eventPayload, json, NEXT_LEDGER_ID, RUN_COLUMNS } from "./sql.js";

export type AdmitInput = Parameters<T.Store["admitRun"]>[0];

/**
 * Admits submits in one transaction, each as it would be alone, in the order given: the batch of
 * submits that reached the store in one turn of the event loop (postgres/batched.ts), or a single
 * one. No two of them may name the same Idempotency-Key of one organization (the batcher sends such
 * a submit in the next transaction, so it finds the first one's record). Round trips per batch,
 * whatever its size: begin; lock the organizations, then their keys,
 * each set in id order (every transaction takes organizations before keys, so none waits on
 * another in a cycle); read the Idempotency-Keys' records when any was given (a statement of its
 * own, so it sees what committed while the locks were awaited); core's decisions, one submit after
 * another against the counters as the earlier ones left them; one statement for every write and the
 * NOTIFY; the keys' records when any; commit. The long statements are prepared once per connection.
 */
export async function admitRuns(
  db: Database,
  origin: string,
  inputs: readonly AdmitInput[],
): Promise<T.AdmitResult[]> {
  const orgIds = [...new Set(inputs.map((i) => i.run.organizationId))].sort();
  const keyIds = [...new Set(inputs.map((i) => i.run.apiKeyId))].sort();
  return db.transaction(async (tx) => {
    const { rows: locked } = await tx.query<{ kind: "o" | "k"; row: Row }>(
      `with o as (select * from organizations where id = any($1::text[]) order by id for update),
         k as (select * from api_keys where id = any($2::text[]) and (select count(*) from o) > 0 order by id for update)
       select 'o' as kind, to_jsonb(o) as row from o
       union all
       select 'k', to_jsonb(k) from k`,
      [orgIds, keyIds],
      "refvid_lock_admission",
    );
    const orgs = new Map(
      locked.filter((l) => l.kind === "o").map((l) => [String(l.row.id), toOrganization(l.row)]),
    );
    const keys = new Map(
      locked.filter((l) => l.kind === "k").map((l) => [String(l.row.id), toApiKey(l.row)]),
    );
    const records = await idempotencyRecords(tx, inputs);

    const results: (T.AdmitResult | null)[] = [];
    const admitted: Admitted[] = [];
    const alerts = new AlertChanges();
    for (const input of inputs) {
      const { run, idempotency, now } = input;
      const org = orgs.get(run.organizationId);
      const key = keys.get(run.apiKeyId);
      if (!org || !key || key.organizationId !== org.id) {
        results.push({ kind: "api_key_gone" });
        continue;
      }
      if (idempotency) {
        const record = records.get(`${run.organizationId}\u0000${idempotency.key}`);
        const decision = decideIdempotency(record, idempotency.requestHash, now);
        if (decision.kind !== "new") {
          results.push({ kind: "idempotency", decision });
          continue;
        }
      }
      if (key.revokedAt) {
        results.push({ kind: "api_key_gone" });
        continue;
      }
      const state = admissionState(org, key, now);
      const decision = decideAdmission(state, run.reserved);
      if (!decision.ok) {
        if (decision.reason === "budget") alerts.check(org, key, () => keyAlerts(org, key, now, true));
        results.push({ kind: "rejected", decision });
        continue;
      }
      const hold = admissionHold(key.environment, run.reserved);
      const before = org.balance - org.reserved;
      org.reserved += hold.reserved;
      org.inFlight += hold.orgInFlight.live;
      org.testInFlight += hold.orgInFlight.test;
      key.inFlight += 1;
      key.spend.reserved += hold.budgetReserved;
      alerts.check(org, key, () => [
        ...(hold.reserved > 0 ? walletAlerts(org, before, now) : []),
        ...keyAlerts(org, key, now),
      ]);
      const remaining = concurrencyRemaining(afterAdmission(state));
      const wallet = { balance: org.balance, reserved: org.reserved, held: hold.reserved };
      admitted.push({ input, index: results.length, environment: key.environment, remaining, wallet });
      results.push(null);
    }
    if (admitted.length > 0) {
      const runs = await insertRuns(tx, origin, admitted, orgs, keys);
      for (const { input, index, remaining } of admitted) {
        const run = runs.get(input.run.id) as T.RunRecord;
        results[index] = { kind: "admitted", run, concurrencyRemaining: remaining };
      }
      const keyed = admitted.flatMap(({ input }) => (input.idempotency ? [input] : []));
      if (keyed.length > 0) await keepIdempotencyRecords(tx, keyed);
    }
    if (alerts.moved()) await writeAlerts(tx, alerts.change());
    return results as T.AdmitResult[];
  });
}

/** The organizations and keys whose alert state an admission moved, and the alerts raised. */
class AlertChanges {
  private readonly organizations = new Map<string, T.OrganizationRecord>();
  private readonly keys = new Map<string, T.ApiKeyRecord>();
  private readonly deliveries: NewAlertDelivery[] = [];

  /** Runs a check that may move the organization's or the key's alert state and raise alerts. */
  check(org: T.OrganizationRecord, key: T.ApiKeyRecord, raise: () => NewAlertDelivery[]): void {
    const fired = JSON.stringify(org.alerts.fired);
    const { level, periodStart } = key.budgetAlert;
    this.deliveries.push(...raise());
    if (JSON.stringify(org.alerts.fired) !== fired) this.organizations.set(org.id, org);
    if (key.budgetAlert.level !== level || key.budgetAlert.periodStart?.getTime() !== periodStart?.getTime())
      this.keys.set(key.id, key);
  }

  moved(): boolean {
    return this.organizations.size + this.keys.size + this.deliveries.length > 0;
  }

  change() {
    return {
      organizations: [...this.organizations.values()],
      keys: [...this.keys.values()],
      deliveries: this.deliveries,
    };
  }
}

interface Admitted {
  input: AdmitInput;
  index: number;
  environment: T.Environment;
  remaining: number;
  /** The wallet right after this admission, and what it held from it (0 for a test run). */
  wallet: { balance: number; reserved: number; held: number };
}

/** The live records of the submits' Idempotency-Keys, by organization and key. */
async function idempotencyRecords(
  tx: Queryable,
  inputs: readonly AdmitInput[],
): Promise<Map<string, IdempotencyRecord>> {
  const keyed = inputs.filter((i) => i.idempotency);
  const records = new Map<string, IdempotencyRecord>();
  if (keyed.length === 0) return records;
  const { rows } = await tx.query(
    `select i.organization_id, i.key, i.request_hash, i.run_id, i.expires_at, i.response_status, i.response_body
     from idempotency_keys i join unnest($1::text[], $2::text[], $3::timestamptz[]) as w (organization_id, key, now)
       on i.organization_id = w.organization_id and i.key = w.key and i.expires_at > w.now`,
    [keyed.map((i) => i.run.organizationId), keyed.map((i) => i.idempotency?.key), keyed.map((i) => i.now)],
    "refvid_read_idempotency_keys",
  );
  for (const row of rows) records.set(`${row.organization_id}\u0000${row.key}`, toIdempotencyRecord(row));
  return records;
}

/**
 * The counters of the organizations and keys an admission moved (only those: a tenant refused at
 * its cap keeps its rows untouched), the runs inserted, their reservations' ledger entries and the
 * NOTIFY, in one statement.
 */
async function insertRuns(
  tx: Queryable,
  origin: string,
  admitted: readonly Admitted[],
  lockedOrgs: Map<string, T.OrganizationRecord>,
  lockedKeys: Map<string, T.ApiKeyRecord>,
): Promise<Map<string, T.RunRecord>> {
  const runs = admitted.map(({ input }) => input.run);
  const orgs = new Map(
    runs.map((r) => [r.organizationId, lockedOrgs.get(r.organizationId) as T.OrganizationRecord]),
  );
  const keys = new Map(runs.map((r) => [r.apiKeyId, lockedKeys.get(r.apiKeyId) as T.ApiKeyRecord]));
  // Live runs' reservations, in the order they were admitted: each is a ledger entry.
  const held = admitted.filter((a) => a.wallet.held > 0);
  const { rows } = await tx.query(
    `with o as (update organizations o set reserved = d.reserved, in_flight = d.in_flight, test_in_flight = d.test_in_flight
           from unnest($1::text[], $2::bigint[], $3::int[], $4::int[]) as d (id, reserved, in_flight, test_in_flight)
           where o.id = d.id),
         k as (update api_keys k set in_flight = d.in_flight, budget_reserved = d.budget_reserved
           from unnest($5::text[], $6::int[], $24::bigint[]) as d (id, in_flight, budget_reserved)
           where k.id = d.id),
         l as (insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, run_id, api_key_id, created_at)
           select ${NEXT_LEDGER_ID}, organization_id, 'reservation', amount, balance, reserved, run_id, api_key_id, created_at
           from unnest($25::text[], $26::bigint[], $27::bigint[], $28::bigint[], $29::text[], $30::text[], $31::timestamptz[])
             with ordinality as e (organization_id, amount, balance, reserved, run_id, api_key_id, created_at, ord)
           order by ord),
         r as (insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, webhook_url, metadata,
             reserved, price_unit, unit_price, reserved_seconds, created_at, webhook_events, priority, video)
           select id, organization_id, api_key_id, environment, endpoint, input, 'queued', webhook_url, metadata, reserved,
             price_unit, unit_price, reserved_seconds, created_at, webhook_events, priority, video
           from unnest($7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::jsonb[], $13::text[], $14::jsonb[],
             $15::bigint[], $16::text[], $17::bigint[], $18::int[], $19::timestamptz[], $22::jsonb[], $23::smallint[],
             $32::jsonb[])
             as n (id, organization_id, api_key_id, environment, endpoint, input, webhook_url, metadata, reserved, price_unit,
               unit_price, reserved_seconds, created_at, webhook_events, priority, video)
           returning ${RUN_COLUMNS}),
         notified as (select pg_notify($20, $21))
     select r.*, (select count(*) from notified) as notified from r`,
    [
      [...orgs.keys()],
      [...orgs.values()].map((o) => o.reserved),
      [...orgs.values()].map((o) => o.inFlight),
      [...orgs.values()].map((o) => o.testInFlight),
      [...keys.keys()],
      [...keys.values()].map((k) => k.inFlight),
      runs.map((r) => r.id),
      runs.map((r) => r.organizationId),
      runs.map((r) => r.apiKeyId),
      admitted.map((a) => a.environment),
      runs.map((r) => r.endpoint),
      runs.map((r) => json(r.input)),
      runs.map((r) => r.webhookUrl),
      runs.map((r) => json(r.metadata)),
      runs.map((r) => r.reserved),
      runs.map((r) => r.priceUnit),
      runs.map((r) => r.unitPrice),
      runs.map((r) => r.reservedSeconds),
      runs.map((r) => r.createdAt),
      CHANNEL,
      eventPayload(origin, { kind: "queued" }),
      runs.map((r) => json(r.webhookEvents ?? DEFAULT_WEBHOOK_EVENTS)),
      runs.map((r) => PRIORITY_RANK[(keys.get(r.apiKeyId) as T.ApiKeyRecord).priority]),
      [...keys.values()].map((k) => k.spend.reserved),
      held.map((a) => a.input.run.organizationId),
      held.map((a) => a.wallet.held),
      held.map((a) => a.wallet.balance),
      held.map((a) => a.wallet.reserved),
      held.map((a) => a.input.run.id),
      held.map((a) => a.input.run.apiKeyId),
      held.map((a) => a.input.now),
      runs.map((r) => (r.video ? json(videoColumn(r.video)) : null)),
    ],
    "refvid_admit_runs",
  );
  return new Map(rows.map((row) => [String(row.id), toRun(row)]));
}

/** The Idempotency-Keys' records of the admitted submits, with an async submit's response. */
async function keepIdempotencyRecords(tx: Queryable, admitted: readonly AdmitInput[]) {
  const rows = admitted.map((input) => ({ input, idempotency: input.idempotency as T.IdempotencyRequest }));
  await tx.query(
    `insert into idempotency_keys (organization_id, key, request_hash, run_id, expires_at, response_status, response_body)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[], $6::int[], $7::jsonb[])
     on conflict (organization_id, key) do update set request_hash = excluded.request_hash, run_id = excluded.run_id,
       expires_at = excluded.expires_at, response_status = excluded.response_status, response_body = excluded.response_body`,
    [
      rows.map((r) => r.input.run.organizationId),
      rows.map((r) => r.idempotency.key),
      rows.map((r) => r.idempotency.requestHash),
      rows.map((r) => r.input.run.id),
      rows.map((r) => r.idempotency.expiresAt),
      rows.map((r) => r.idempotency.response?.status ?? null),
      rows.map((r) => (r.idempotency.response ? json(r.idempotency.response.body) : null)),
    ],
    "refvid_keep_idempotency_keys",
  );
}

/** A video's `video` column, in the column's snake_case. */
const videoColumn = (video: T.NewVideo) => ({
  model: video.model,
  seconds: video.seconds,
  size: video.size,
  remixed_from: video.remixedFrom,
});
