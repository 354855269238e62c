/**
 * `PostgresStore implements Store` on a Postgres server (`pg`) or embedded PGlite, through one
 * small query interface. Admission locks the organization row, then the key row, in that fixed
 * order; ending a run locks the run, then its organization and key. Counters live on those rows,
 * so admission, poll and account never scan history (DESIGN.md, "Stores and scale").
 */
import {
  concurrencyRemaining,
  countRequest,
  decideAdmission,
  decideEnd,
  decideIdempotency,
  decideTopUp,
  IN_FLIGHT_STATUSES,
  type Micros,
  RATE_WINDOW_MS,
  settleRun,
  tierFor,
} from "@refvid/core";
import type * as T from "../types.js";
import { webhookIdOf } from "../webhook-id.js";
import type { Database, Queryable } from "./database.js";
import { toApiKey, toDelivery, toIdempotencyRecord, toOrganization, toRun } from "./rows.js";

const json = (value: unknown) => JSON.stringify(value);
const CHANNEL = "refvid_runs";
/** Core's in-flight statuses as SQL literals, the same text as the `runs_in_flight` index predicate. */
const IN_FLIGHT_SQL = IN_FLIGHT_STATUSES.map((status) => `'${status}'`).join(", ");
/** NOTIFY is transactional: listeners hear it only if the transaction commits. */
const notify = (tx: Queryable, event: T.StoreEvent) =>
  tx.query("select pg_notify($1, $2)", [CHANNEL, json(event)]);

export class PostgresStore implements T.Store {
  constructor(private readonly db: Database) {}

  async createOrganization(input: { id: string; name: string; webhookSecret: string; now: Date }) {
    const { tier, concurrency } = tierFor(0);
    const { rows } = await this.db.query(
      `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret)
       values ($1, $2, $3, $4, $5, $6) returning *`,
      [input.id, input.name, input.now, tier, concurrency, input.webhookSecret],
    );
    return toOrganization(rows[0] as Record<string, unknown>);
  }

  async getOrganization(id: string) {
    const { rows } = await this.db.query("select * from organizations where id = $1", [id]);
    return rows[0] ? toOrganization(rows[0]) : null;
  }

  async createApiKey(input: Omit<T.ApiKeyRecord, "inFlight" | "revokedAt" | "createdAt"> & { now: Date }) {
    const { rows } = await this.db.query(
      `insert into api_keys (id, organization_id, name, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, created_at)
       select $1, id, $3, $4, $5, $6, $7, $8, $9 from organizations where id = $2 returning *`,
      [
        input.id,
        input.organizationId,
        input.name,
        input.environment,
        input.keyHash,
        input.keyPrefix,
        input.maxConcurrency,
        input.rateLimitPerMinute,
        input.now,
      ],
    );
    return rows[0] ? toApiKey(rows[0]) : null;
  }

  async getApiKey(id: string) {
    const { rows } = await this.db.query("select * from api_keys where id = $1", [id]);
    return rows[0] ? toApiKey(rows[0]) : null;
  }

  async updateApiKey(id: string, patch: T.ApiKeyPatch) {
    const { rows } = await this.db.query(
      `update api_keys set name = coalesce($2, name), max_concurrency = coalesce($3, max_concurrency),
         rate_limit_per_minute = coalesce($4, rate_limit_per_minute) where id = $1 returning *`,
      [id, patch.name ?? null, patch.maxConcurrency ?? null, patch.rateLimitPerMinute ?? null],
    );
    return rows[0] ? toApiKey(rows[0]) : null;
  }

  async revokeApiKey(id: string, now: Date) {
    const { rows } = await this.db.query(
      "update api_keys set revoked_at = coalesce(revoked_at, $2) where id = $1 returning *",
      [id, now],
    );
    return rows[0] ? toApiKey(rows[0]) : null;
  }

  async addTopUp(input: {
    id: string;
    organizationId: string;
    amount: Micros;
    note: string | null;
    now: Date;
  }) {
    return this.db.transaction(async (tx) => {
      const locked = await tx.query("select * from organizations where id = $1 for update", [
        input.organizationId,
      ]);
      const current = locked.rows[0];
      if (!current) return null;
      const decision = decideTopUp(toOrganization(current).lifetimeTopUps, input.amount);
      if (!decision.ok) return { kind: "rejected", decision } as const;
      const { rows } = await tx.query(
        `update organizations set balance = balance + $2, lifetime_top_ups = $3, tier = $4, concurrency_limit = $5
         where id = $1 returning *`,
        [input.organizationId, input.amount, decision.lifetimeTopUps, decision.tier, decision.concurrency],
      );
      await tx.query(
        "insert into top_ups (id, organization_id, amount, note, created_at) values ($1, $2, $3, $4, $5)",
        [input.id, input.organizationId, input.amount, input.note, input.now],
      );
      const topUp = {
        id: input.id,
        organizationId: input.organizationId,
        amount: input.amount,
        note: input.note,
        createdAt: input.now,
      };
      return {
        kind: "added",
        topUp,
        organization: toOrganization(rows[0] as Record<string, unknown>),
      } as const;
    });
  }

  async findApiKeyByHash(keyHash: string) {
    const { rows } = await this.db.query<{ k: Record<string, unknown>; o: Record<string, unknown> }>(
      `select to_jsonb(k) as k, to_jsonb(o) as o from api_keys k join organizations o on o.id = k.organization_id
       where k.key_hash = $1`,
      [keyHash],
    );
    const row = rows[0];
    return row ? { apiKey: toApiKey(row.k), organization: toOrganization(row.o) } : null;
  }

  async countRequest(apiKeyId: string, limit: number, now: Date) {
    // One statement, atomic across processes: start a new window or count into the current one.
    const { rows } = await this.db.query<{ window_start: Date; count: number }>(
      `insert into rate_windows (api_key_id, window_start, count) values ($1, $2, 1)
       on conflict (api_key_id) do update set
         window_start = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then $2 else rate_windows.window_start end,
         count = case when rate_windows.window_start <= $2::timestamptz - $3 * interval '1 millisecond' then 1 else rate_windows.count + 1 end
       returning window_start, count`,
      [apiKeyId, now, RATE_WINDOW_MS],
    );
    const row = rows[0] as { window_start: Date; count: number };
    const previous = { windowStart: new Date(row.window_start).getTime(), count: Number(row.count) - 1 };
    return countRequest(previous.count === 0 ? undefined : previous, limit, now.getTime());
  }

  async admitRun({
    run,
    idempotency,
    now,
  }: {
    run: T.NewRun;
    idempotency?: T.IdempotencyRequest;
    now: Date;
  }): Promise<T.AdmitResult> {
    return this.db.transaction(async (tx) => {
      const orgRows = await tx.query("select * from organizations where id = $1 for update", [
        run.organizationId,
      ]);
      const keyRows = await tx.query("select * from api_keys where id = $1 for update", [run.apiKeyId]);
      if (!orgRows.rows[0] || !keyRows.rows[0]) return { kind: "api_key_gone" };
      const org = toOrganization(orgRows.rows[0]);
      const key = toApiKey(keyRows.rows[0]);
      if (idempotency) {
        const { rows } = await tx.query(
          "select * from idempotency_keys where organization_id = $1 and key = $2 and expires_at > $3",
          [run.organizationId, idempotency.key, now],
        );
        const decision = decideIdempotency(
          rows[0] && toIdempotencyRecord(rows[0]),
          idempotency.requestHash,
          now,
        );
        if (decision.kind === "mismatch") return { kind: "idempotency_mismatch" };
        if (decision.kind === "pending") return { kind: "idempotency_pending", runId: decision.runId };
        if (decision.kind === "replay") {
          const { runId, status, body } = decision;
          return { kind: "idempotency_replay", runId, status, body };
        }
      }
      if (key.revokedAt) return { kind: "api_key_gone" };
      const state = {
        keyLimit: key.maxConcurrency,
        keyInFlight: key.inFlight,
        orgLimit: org.concurrencyLimit,
        orgInFlight: org.inFlight,
        available: org.balance - org.reserved,
      };
      const decision = decideAdmission(state, run.reserved);
      if (!decision.ok) return { kind: "rejected", decision };

      await tx.query(
        "update organizations set reserved = reserved + $2, in_flight = in_flight + 1 where id = $1",
        [org.id, run.reserved],
      );
      await tx.query("update api_keys set in_flight = in_flight + 1 where id = $1", [key.id]);
      const { rows } = await tx.query(
        `insert into runs (id, organization_id, api_key_id, endpoint, input, status, webhook_url, metadata, reserved, unit_price, reserved_seconds, created_at)
         values ($1, $2, $3, $4, $5, 'queued', $6, $7, $8, $9, $10, $11) returning *`,
        [
          run.id,
          run.organizationId,
          run.apiKeyId,
          run.endpoint,
          json(run.input),
          run.webhookUrl,
          json(run.metadata),
          run.reserved,
          run.unitPrice,
          run.reservedSeconds,
          run.createdAt,
        ],
      );
      const admitted = toRun(rows[0] as Record<string, unknown>);
      if (idempotency) {
        const response = idempotency.response?.(admitted);
        await tx.query(
          `insert into idempotency_keys (organization_id, key, request_hash, run_id, expires_at, response_status, response_body)
           values ($1, $2, $3, $4, $5, $6, $7)
           on conflict (organization_id, key) do update set request_hash = excluded.request_hash, run_id = excluded.run_id,
             expires_at = excluded.expires_at, response_status = excluded.response_status, response_body = excluded.response_body`,
          [
            run.organizationId,
            idempotency.key,
            idempotency.requestHash,
            run.id,
            idempotency.expiresAt,
            response?.status ?? null,
            response ? json(response.body) : null,
          ],
        );
      }
      await notify(tx, { kind: "queued" });
      const remaining = concurrencyRemaining({
        ...state,
        keyInFlight: key.inFlight + 1,
        orgInFlight: org.inFlight + 1,
      });
      return { kind: "admitted", run: admitted, concurrencyRemaining: remaining };
    });
  }

  async completeIdempotency(organizationId: string, key: string, status: number, body: unknown) {
    await this.db.query(
      `update idempotency_keys set response_status = $3, response_body = $4
       where organization_id = $1 and key = $2 and response_status is null`,
      [organizationId, key, status, json(body)],
    );
  }

  async getRun(organizationId: string, runId: string) {
    const { rows } = await this.db.query("select * from runs where id = $1 and organization_id = $2", [
      runId,
      organizationId,
    ]);
    return rows[0] ? toRun(rows[0]) : null;
  }

  async searchRuns(search: T.RunSearch) {
    const where = ["organization_id = $1"];
    const params: unknown[] = [search.organizationId];
    const add = (clause: (n: string) => string, value: unknown) => {
      params.push(value);
      where.push(clause(`$${params.length}`));
    };
    if (search.statuses) add((p) => `status = any(${p}::text[])`, search.statuses);
    if (search.endpoint) add((p) => `endpoint = ${p}`, search.endpoint);
    if (search.createdAfter) add((p) => `created_at >= ${p}`, search.createdAfter);
    if (search.createdBefore) add((p) => `created_at < ${p}`, search.createdBefore);
    if (search.metadata) add((p) => `metadata @> ${p}::jsonb`, json(search.metadata));
    if (search.after) {
      params.push(search.after.createdAt, search.after.id);
      where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
    }
    params.push(search.limit);
    const { rows } = await this.db.query(
      `select * from runs where ${where.join(" and ")} order by created_at desc, id desc limit $${params.length}`,
      params,
    );
    return rows.map(toRun);
  }

  async claimRuns({
    workerId,
    limit,
    leaseMs,
    now,
  }: {
    workerId: string;
    limit: number;
    leaseMs: number;
    now: Date;
  }) {
    const { rows } = await this.db.query(
      `update runs set status = 'processing', started_at = coalesce(started_at, $2), lease_owner = $3,
         lease_expires_at = $4, attempts = attempts + 1
       where id in (select id from runs where status = 'queued' order by created_at, id limit $1 for update skip locked)
       returning *`,
      [limit, now, workerId, new Date(now.getTime() + leaseMs)],
    );
    return rows
      .map(toRun)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
  }

  async renewLease({
    runId,
    workerId,
    leaseMs,
    now,
  }: {
    runId: string;
    workerId: string;
    leaseMs: number;
    now: Date;
  }) {
    const { rows } = await this.db.query(
      "update runs set lease_expires_at = $3 where id = $1 and status = 'processing' and lease_owner = $2 returning id",
      [runId, workerId, new Date(now.getTime() + leaseMs)],
    );
    return rows.length > 0;
  }

  async setProgress(runId: string, progress: number) {
    await this.db.query("update runs set progress = $2 where id = $1 and status = 'processing'", [
      runId,
      progress,
    ]);
  }

  async completeRun(input: {
    runId: string;
    outcome: T.RunOutcome;
    now: Date;
    organizationId?: string;
    leaseOwner?: string;
  }) {
    return this.db.transaction((tx) => completeRunIn(tx, input));
  }

  async findOverdueRuns({ createdBefore, limit }: { createdBefore: Date; limit: number }) {
    const { rows } = await this.db.query(
      `select * from runs where status in (${IN_FLIGHT_SQL}) and created_at < $1 order by created_at limit $2`,
      [createdBefore, limit],
    );
    return rows.map(toRun);
  }

  async requeueExpiredLeases({ now, maxAttempts, limit }: { now: Date; maxAttempts: number; limit: number }) {
    const requeued = await this.db.query<{ id: string }>(
      `update runs set status = 'queued', lease_owner = null, lease_expires_at = null, progress = null
       where id in (select id from runs where status = 'processing' and lease_expires_at <= $1 and attempts < $2
                    order by lease_expires_at limit $3 for update skip locked)
       returning id`,
      [now, maxAttempts, limit],
    );
    if (requeued.rows.length > 0) await notify(this.db, { kind: "queued" });
    const exhausted = await this.db.query(
      "select * from runs where status = 'processing' and lease_expires_at <= $1 and attempts >= $2 order by lease_expires_at limit $3",
      [now, maxAttempts, limit],
    );
    return { requeued: requeued.rows.map((r) => r.id), exhausted: exhausted.rows.map(toRun) };
  }

  async claimWebhookDeliveries({ now, limit, leaseMs }: { now: Date; limit: number; leaseMs: number }) {
    const { rows } = await this.db.query(
      `with due as (select id, next_attempt_at from webhook_deliveries where state = 'pending' and next_attempt_at <= $1
                    order by next_attempt_at limit $2 for update skip locked)
       update webhook_deliveries d set next_attempt_at = $3 from due where d.id = due.id
       returning d.*, due.next_attempt_at as due_at`,
      [now, limit, new Date(now.getTime() + leaseMs)],
    );
    // Report each delivery as it was due, as the in-memory store does.
    return rows.map((r) => ({ ...toDelivery(r), nextAttemptAt: new Date(r.due_at as Date) }));
  }

  async recordWebhookAttempt(id: string, result: T.WebhookAttemptResult) {
    if (result.ok) {
      await this.db.query(
        `update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2), state = 'delivered',
           delivered_at = $3, last_error = null where id = $1 and state = 'pending'`,
        [id, result.payload, result.now],
      );
      return;
    }
    await this.db.query(
      `update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2), last_error = $3,
         next_attempt_at = coalesce($4, next_attempt_at), state = case when $4::timestamptz is null then 'failed' else 'pending' end
       where id = $1 and state = 'pending'`,
      [id, result.payload, result.error, result.retryAt],
    );
  }

  async listWebhookDeliveries(runId: string) {
    const { rows } = await this.db.query("select * from webhook_deliveries where run_id = $1", [runId]);
    return rows.map(toDelivery);
  }

  async subscribe(listener: (event: T.StoreEvent) => void) {
    return this.db.listen(CHANNEL, (payload) => {
      try {
        listener(JSON.parse(payload) as T.StoreEvent);
      } catch {
        // not one of ours
      }
    });
  }

  async ping() {
    await this.db.query("select 1");
  }

  async close() {
    await this.db.close();
  }
}

/** The terminal transition: run, then organization, then key, all in the caller's transaction. */
async function completeRunIn(
  tx: Queryable,
  {
    runId,
    outcome,
    now,
    organizationId,
    leaseOwner,
  }: { runId: string; outcome: T.RunOutcome; now: Date; organizationId?: string; leaseOwner?: string },
): Promise<T.CompleteResult> {
  const found = await tx.query("select * from runs where id = $1 for update", [runId]);
  const row = found.rows[0];
  if (!row) return { kind: "not_found" };
  const run = toRun(row);
  const decision = decideEnd(run, { organizationId, leaseOwner });
  if (!decision.ok)
    return decision.reason === "not_found" ? { kind: "not_found" } : { kind: decision.reason, run };

  const settled = settleRun(run, outcome);
  await tx.query("select id from organizations where id = $1 for update", [run.organizationId]);
  await tx.query(
    `update organizations set reserved = reserved - $2, balance = balance - $3, total_spent = total_spent + $3,
       in_flight = in_flight + $4 where id = $1`,
    [run.organizationId, settled.released, settled.charged, settled.inFlightDelta],
  );
  await tx.query("update api_keys set in_flight = in_flight + $2 where id = $1", [
    run.apiKeyId,
    settled.inFlightDelta,
  ]);
  const { rows } = await tx.query(
    `update runs set status = $2, charged = $3, billable_seconds = $4, output = $5, error = $6, progress = $7,
       completed_at = $8, lease_owner = null, lease_expires_at = null where id = $1 returning *`,
    [
      runId,
      settled.status,
      settled.charged,
      settled.billableSeconds,
      outcome.status === "succeeded" ? json(outcome.output) : null,
      outcome.status === "succeeded" ? null : json(outcome.error),
      settled.progress,
      now,
    ],
  );
  if (run.webhookUrl && settled.webhookEvent) {
    await tx.query(
      `insert into webhook_deliveries (id, run_id, organization_id, url, event_type, next_attempt_at, state)
       values ($1, $2, $3, $4, $5, $6, 'pending')`,
      [webhookIdOf(run.id), run.id, run.organizationId, run.webhookUrl, settled.webhookEvent, now],
    );
  }
  await notify(tx, { kind: "ended", runId });
  return { kind: "completed", run: toRun(rows[0] as Record<string, unknown>) };
}
