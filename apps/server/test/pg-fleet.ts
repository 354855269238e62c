/**
 * A fleet of refvid processes on a Postgres database of its own for one test file, API keys and
 * requests made on it, and the ledger and key budgets as Postgres holds them, to reconcile the
 * wallet and the budgets with (issue 28).
 */
import { type LedgerKind, movesBalance, parseUsd } from "@refvid/core";
import { DESTROY_TIMEOUT_MS, testDatabases } from "@refvid/store/testing";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { type Fleet, fleet, type RefvidProcess } from "./processes.js";

/** A fleet on a database of its own, with the processes it started and a pool for the test's reads. */
export interface PgFleet {
  db: pg.Pool;
  processes: Fleet;
  api: RefvidProcess[];
  workers: RefvidProcess[];
  /** Stops every process, closes the pool and drops the database. */
  close(): Promise<void>;
}

/**
 * `api` API processes and `workers` worker processes on a fresh, migrated Postgres database
 * (`env` added to what `fleet` sets), and a pool of two connections on it for the test's reads:
 * started before the file's tests (its properties are read in them) and stopped after them.
 */
export function useFleetOnPostgres(
  env: Record<string, string>,
  counts: { api: number; workers: number },
): PgFleet {
  let started: PgFleet | undefined;
  beforeAll(async () => {
    const databases = await testDatabases();
    const url = await databases.create();
    const db = sqlPool(url);
    const processes = await fleet({ ...databases.env(url), ...env });
    const close = async () => {
      await processes.stopAll();
      await db.end();
      await databases.destroy();
    };
    started = { db, processes, api: [], workers: [], close };
    for (let i = 0; i < counts.api; i++) started.api.push(await processes.start("api"));
    for (let i = 0; i < counts.workers; i++) started.workers.push(await processes.start("worker"));
  }, 120_000);
  afterAll(async () => started?.close(), DESTROY_TIMEOUT_MS);
  const get = () => {
    if (!started) throw new Error("the fleet is started before the file's tests");
    return started;
  };
  return {
    get db() {
      return get().db;
    },
    get processes() {
      return get().processes;
    },
    get api() {
      return get().api;
    },
    get workers() {
      return get().workers;
    },
    close: () => get().close(),
  };
}

export interface LedgerRow {
  id: string;
  kind: LedgerKind;
  amount: number;
  balance: number;
  reserved: number;
  runId: string | null;
  apiKeyId: string | null;
  createdAt: Date;
}

/** An organization's ledger entries as Postgres holds them, in the order they were written. */
export async function ledgerInSql(db: pg.Pool, organizationId: string): Promise<LedgerRow[]> {
  const { rows } = await db.query(
    `select id, kind, amount::bigint as amount, balance::bigint as balance, reserved::bigint as reserved,
       run_id, api_key_id, created_at from ledger_entries where organization_id = $1 order by id`,
    [organizationId],
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    amount: Number(r.amount),
    balance: Number(r.balance),
    reserved: Number(r.reserved),
    runId: r.run_id,
    apiKeyId: r.api_key_id,
    createdAt: r.created_at,
  }));
}

/**
 * A key's budget standing as Postgres holds it for the period that began at `since` (its spend
 * counter counts only when it is of that period), with what its runs in flight hold and what its
 * runs that ended since then were charged.
 */
export async function keyInSql(db: pg.Pool, apiKeyId: string, since: Date) {
  const { rows } = await db.query(
    `select k.budget::bigint as budget, k.budget_period, k.budget_reserved::bigint as reserved,
       k.spent_day::bigint as spent_day, k.spent_day_start, k.spent_week::bigint as spent_week, k.spent_week_start,
       k.spent_month::bigint as spent_month, k.spent_month_start,
       (select coalesce(sum(reserved), 0)::bigint from runs
         where api_key_id = k.id and status in ('queued', 'processing')) as runs_reserved,
       (select coalesce(sum(charged), 0)::bigint from runs where api_key_id = k.id and completed_at >= $2) as runs_charged
     from api_keys k where k.id = $1`,
    [apiKeyId, since],
  );
  const r = rows[0];
  const period = r.budget_period as "day" | "week" | "month";
  const counterStart = r[`spent_${period}_start`] as Date | null;
  return {
    budget: Number(r.budget),
    period,
    reserved: Number(r.reserved),
    spent: counterStart?.getTime() === since.getTime() ? Number(r[`spent_${period}`]) : 0,
    runsReserved: Number(r.runs_reserved),
    runsCharged: Number(r.runs_charged),
  };
}

/**
 * What the entries add up to: the balance and the reservation (core's `reconcile`), and the
 * entries whose own figures (the wallet right after each) are not the running sums up to them.
 */
export function ledgerTotals(entries: readonly LedgerRow[]) {
  let balance = 0;
  let reserved = 0;
  const unlike: string[] = [];
  for (const entry of entries) {
    if (movesBalance(entry.kind)) balance += entry.amount;
    else reserved += entry.amount;
    if (entry.balance !== balance || entry.reserved !== reserved) unlike.push(entry.id);
  }
  return { balance, reserved, unlike };
}

/** Every entry `GET /admin/v1/ledger?<query>` lists, page by page, as id, kind and amount in micros. */
export async function adminLedger(processes: Fleet, query: string) {
  const entries: { id: string; kind: string; amount: number; apiKeyId: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const page = await processes.admin(
      "GET",
      `/admin/v1/ledger?${query}&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    for (const e of page.data)
      entries.push({
        id: e.ledger_entry_id,
        kind: e.kind,
        amount: parseUsd(e.amount_usd) as number,
        apiKeyId: e.api_key_id,
      });
    cursor = page.next_cursor;
  } while (cursor);
  return entries;
}

/** Where a run of lab-d/model-d is submitted, and its input: 4 s, priced 0.284 USD. */
export const MODEL_D_SUBMIT = "/v1/run/lab-d/model-d/reference-to-video";
export const modelDInput = (prompt: string) => ({
  prompt,
  image_urls: ["https://example.com/a.png"],
  duration: "4s",
});

export interface FleetKey {
  id: string;
  key: string;
  environment: "live" | "test";
}

/** A new API key of the organization, never rate limited in a test (`settings` as the admin API takes them). */
export async function newKey(
  processes: Fleet,
  organizationId: string,
  settings: { environment?: FleetKey["environment"]; max_concurrency?: number; budget?: unknown },
): Promise<FleetKey> {
  const made = await processes.admin("POST", `/admin/v1/organizations/${organizationId}/api-keys`, {
    rate_limit_per_minute: 100_000,
    ...settings,
  });
  return { id: made.api_key_id, key: made.key, environment: made.environment };
}

/** A request to `process` made with an API key: its status and JSON body. */
export const callWithKey = (
  process: RefvidProcess,
  key: string,
  method: string,
  path: string,
  body?: unknown,
) =>
  fetch(`${process.url}${path}`, {
    method,
    headers: { authorization: `Key ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

/**
 * A pool for a test's own SQL checks. The database is dropped (with force) at teardown, which may
 * end a connection the pool still keeps: that error is no test's failure, so the pool ignores it.
 */
export const sqlPool = (connectionString: string, options: pg.PoolConfig = {}): pg.Pool =>
  new pg.Pool({ connectionString, max: 2, ...options }).on("error", () => {});
