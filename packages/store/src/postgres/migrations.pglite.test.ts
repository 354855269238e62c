/** Upgrades: data written under an older schema stays right after the newer migrations. */
import { PGlite } from "@electric-sql/pglite";
import { runErrors } from "@refvid/core";
import { afterEach, describe, expect, it } from "vitest";
import { T0 } from "../contract/fixtures.js";
import type { Database } from "./database.js";
import { migrate } from "./migrate.js";
import { pgliteDatabase } from "./pglite-database.js";
import { PostgresStore } from "./postgres-store.js";

let pglite: PGlite | undefined;
afterEach(async () => pglite?.close());

async function databaseAt(through: string): Promise<Database> {
  pglite = new PGlite();
  const db = pgliteDatabase(pglite);
  await migrate(db, { through });
  return db;
}

/** Organization `org_a` and its live key `key_live`, as every schema since 000006 holds them. */
async function organizationWithKey(db: Database): Promise<void> {
  await db.query(
    `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret)
     values ('org_a', 'A', $1, 'starter', 10, 'whsec_x')`,
    [T0],
  );
  await db.query(
    `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, created_at)
     values ('key_live', 'org_a', 'live', 'h1', 'sk-live-', 10, 120, $1)`,
    [T0],
  );
}

describe("000006 environments", () => {
  it("moves test runs in flight out of the live counts and the reservation, and scopes idempotency keys", async () => {
    const db = await databaseAt("000005");
    await db.query(
      `insert into organizations (id, name, created_at, balance, reserved, tier, concurrency_limit, in_flight, webhook_secret)
       values ('org_a', 'A', $1, 10000000, 1500000, 'starter', 10, 2, 'whsec_x')`,
      [T0],
    );
    await db.query(
      `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, in_flight, created_at)
       values ('key_live', 'org_a', 'live', 'h1', 'sk-live-', 10, 120, 1, $1), ('key_test', 'org_a', 'test', 'h2', 'sk-test-', 10, 120, 1, $1)`,
      [T0],
    );
    const run = (id: string, key: string, status: string, reserved: number, charged: number | null) =>
      db.query(
        `insert into runs (id, organization_id, api_key_id, endpoint, input, status, reserved, unit_price, reserved_seconds, charged, created_at)
         values ($1, 'org_a', $2, 'lab-d/model-d/reference-to-video', '{}', $3, $4, 100000, 5, $5, $6)`,
        [id, key, status, reserved, charged, T0],
      );
    await run("run_live", "key_live", "queued", 1_000_000, null);
    await run("run_test", "key_test", "processing", 500_000, null);
    await run("run_test_done", "key_test", "succeeded", 500_000, 500_000);
    await db.query(
      `insert into idempotency_keys (organization_id, key, request_hash, run_id, expires_at)
       values ('org_a', 'a', 'h', 'run_live', $1), ('org_a', 'live:a', 'h', 'run_test', $1)`,
      [T0],
    );

    expect(await migrate(db)).toContain("000006_environments.sql");

    const org = (await db.query("select in_flight, test_in_flight, reserved, balance from organizations"))
      .rows[0];
    expect(org).toEqual({ in_flight: 1, test_in_flight: 1, reserved: 1_000_000, balance: 10_000_000 });
    const runs = await db.query<{ id: string; environment: string }>(
      "select id, environment from runs order by id",
    );
    expect(runs.rows).toEqual([
      { id: "run_live", environment: "live" },
      { id: "run_test", environment: "test" },
      { id: "run_test_done", environment: "test" },
    ]);
    // A live key "a" and a test run's key "live:a" were both stored; rewriting them collides with nothing.
    const keys = await db.query<{ key: string }>("select key from idempotency_keys order by key");
    expect(keys.rows.map((r) => r.key)).toEqual(["live:a", "test:live:a"]);

    // The test run ends without touching the wallet, and the counts stay right.
    const store = new PostgresStore(db);
    const ended = await store.completeRun({
      runId: "run_test",
      outcome: { status: "cancelled", error: runErrors.cancelled() },
      now: T0,
    });
    expect(ended.kind).toBe("completed");
    expect(await store.getOrganization("org_a")).toMatchObject({
      inFlight: 1,
      testInFlight: 0,
      reserved: 1_000_000,
      balance: 10_000_000,
    });
  });
});

describe("000007 webhook attempts", () => {
  it("puts each existing delivery in its run's environment, queued at the run's end, in the log", async () => {
    const db = await databaseAt("000006");
    await organizationWithKey(db);
    await db.query(
      `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, created_at)
       values ('key_test', 'org_a', 'test', 'h2', 'sk-test-', 10, 120, $1)`,
      [T0],
    );
    const ended = (id: string, key: string, environment: string, completedAt: Date) =>
      db.query(
        `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, reserved, unit_price,
           reserved_seconds, charged, created_at, completed_at, webhook_url)
         values ($1, 'org_a', $2, $3, 'lab-d/model-d/reference-to-video', '{}', 'failed', 0, 0, 5, 0, $4, $5, 'https://example.com/h')`,
        [id, key, environment, T0, completedAt],
      );
    const later = new Date(T0.getTime() + 60_000);
    await ended("run_live", "key_live", "live", later);
    await ended("run_test", "key_test", "test", T0);
    await db.query(
      `insert into webhook_deliveries (id, run_id, organization_id, url, event_type, attempts, next_attempt_at, state, delivered_at)
       values ('msg_live', 'run_live', 'org_a', 'https://example.com/h', 'run.failed', 1, $1, 'delivered', $1),
              ('msg_test', 'run_test', 'org_a', 'https://example.com/h', 'run.failed', 0, $1, 'pending', null)`,
      [later],
    );

    expect(await migrate(db)).toContain("000007_webhook_attempts.sql");

    const store = new PostgresStore(db);
    const log = (environment: "live" | "test") =>
      store.searchWebhookDeliveries({ organizationId: "org_a", environment, limit: 10 });
    expect(await log("live")).toMatchObject([
      { id: "msg_live", createdAt: later, state: "delivered", attempts: 1, history: [], redelivery: false },
    ]);
    expect(await log("test")).toMatchObject([{ id: "msg_test", createdAt: T0, state: "pending" }]);
    expect((await store.getOrganization("org_a"))?.webhookSecrets.live).toEqual({
      secret: "whsec_x",
      previous: null,
    });
  });
});

describe("000012 run price unit", () => {
  it("keeps every run admitted before priced per second, and refuses any unit but second or run", async () => {
    const db = await databaseAt("000011");
    await db.query(
      `insert into organizations (id, name, created_at, balance, reserved, tier, concurrency_limit, in_flight, webhook_secret)
       values ('org_a', 'A', $1, 10000000, 500000, 'starter', 10, 1, 'whsec_x')`,
      [T0],
    );
    await db.query(
      `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, in_flight, created_at)
       values ('key_live', 'org_a', 'live', 'h1', 'sk-live-', 10, 120, 1, $1)`,
      [T0],
    );
    await db.query(
      `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, reserved, unit_price, reserved_seconds, created_at)
       values ('run_a', 'org_a', 'key_live', 'live', 'lab-d/model-d/reference-to-video', '{}', 'queued', 500000, 100000, 5, $1)`,
      [T0],
    );

    expect(await migrate(db)).toContain("000012_run_price_unit.sql");

    const store = new PostgresStore(db);
    expect(await store.getRun("org_a", "run_a")).toMatchObject({
      priceUnit: "second",
      unitPrice: 100_000,
      reservedSeconds: 5,
      reserved: 500_000,
    });
    await expect(db.query("update runs set price_unit = 'minute' where id = 'run_a'")).rejects.toThrow(
      /price_unit/,
    );
  });
});

describe("000015 webhook events", () => {
  it("gives every run the terminal event alone, keeps each delivery, and lets a run have several", async () => {
    const db = await databaseAt("000014");
    await organizationWithKey(db);
    await db.query(
      `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, reserved, unit_price,
         reserved_seconds, charged, created_at, completed_at, webhook_url)
       values ('run_a', 'org_a', 'key_live', 'live', 'lab-d/model-d/reference-to-video', '{}', 'failed', 0, 0, 5, 0, $1, $1,
         'https://example.com/h')`,
      [T0],
    );
    const sent = new Date(T0.getTime() + 500);
    await db.query(
      `insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, attempts,
         next_attempt_at, state, delivered_at)
       values ('msg_a', 'run_a', 'org_a', 'live', $1, 'https://example.com/h', 'run.failed', 1, $1, 'delivered', $2)`,
      [T0, sent],
    );
    await db.query(
      `insert into webhook_attempts (delivery_id, number, attempted_at, status, error, duration_ms)
       values ('msg_a', 1, $1, 200, null, 10)`,
      [sent],
    );

    expect(await migrate(db)).toContain("000015_webhook_events.sql");

    const store = new PostgresStore(db);
    expect((await store.getRun("org_a", "run_a"))?.webhookEvents).toEqual(["completed"]);
    expect(await store.listWebhookDeliveries("run_a")).toMatchObject([
      { id: "msg_a", eventType: "run.failed", state: "delivered", runState: null },
    ]);
    expect((await db.query("select first_attempt_at from webhook_deliveries")).rows).toEqual([
      { first_attempt_at: new Date(sent.getTime() + 10) },
    ]);
    await db.query(
      `insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type,
         next_attempt_at, state)
       values ('msg_a_started', 'run_a', 'org_a', 'live', $1, 'https://example.com/h', 'run.started', $1, 'pending')`,
      [T0],
    );
    expect((await store.listWebhookDeliveries("run_a")).map((d) => d.id)).toEqual(["msg_a", "msg_a_started"]);
  });
});

describe("000016 webhook secret per environment", () => {
  it("keeps each organization's secret and its rotation as the live ones, and gives each a fresh test secret", async () => {
    const db = await databaseAt("000015");
    await organizationWithKey(db);
    const expiresAt = new Date(T0.getTime() + 86_400_000);
    await db.query(
      `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret,
         previous_webhook_secret, previous_webhook_secret_expires_at)
       values ('org_b', 'B', $1, 'starter', 10, 'whsec_bmV3', 'whsec_b2xk', $2)`,
      [T0, expiresAt],
    );

    expect(await migrate(db)).toContain("000016_webhook_secret_per_environment.sql");

    const store = new PostgresStore(db);
    const [a, b] = await Promise.all(["org_a", "org_b"].map((id) => store.getOrganization(id)));
    expect(a?.webhookSecrets.live).toEqual({ secret: "whsec_x", previous: null });
    expect(b?.webhookSecrets.live).toEqual({
      secret: "whsec_bmV3",
      previous: { secret: "whsec_b2xk", expiresAt },
    });
    const tests = [a, b].map((org) => org?.webhookSecrets.test);
    for (const test of tests) {
      expect(test?.previous).toBeNull();
      // 32 random bytes, as the API's pattern allows; none is a live secret, and each its own.
      expect(test?.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(test?.secret.slice("whsec_".length) ?? "", "base64")).toHaveLength(32);
    }
    expect(new Set([...tests.map((t) => t?.secret), "whsec_x", "whsec_bmV3"]).size).toBe(4);

    // Each environment rotates on its own columns.
    const rotated = await store.rotateWebhookSecret({
      organizationId: "org_a",
      environment: "test",
      secret: "whsec_dGVzdA==",
      previousExpiresAt: expiresAt,
    });
    expect(rotated?.webhookSecrets).toEqual({
      live: { secret: "whsec_x", previous: null },
      test: { secret: "whsec_dGVzdA==", previous: { secret: tests[0]?.secret, expiresAt } },
    });
    // The database refuses one secret for both worlds.
    await expect(
      db.query("update organizations set test_webhook_secret = webhook_secret where id = 'org_a'"),
    ).rejects.toThrow(/organizations_webhook_secrets_differ/);
  });
});
