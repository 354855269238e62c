/**
 * The delivery log's search on a Postgres server holding many organizations' deliveries: every
 * page is read newest first through an index, never by scanning the table or sorting it.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WebhookDeliverySearch } from "../types.js";
import type { Database } from "./database.js";
import { pgDatabase } from "./pg-database.js";
import { searchWebhookDeliveriesQuery } from "./queries/search-webhook-deliveries.js";
import { type TestDatabases, testDatabases } from "./test-databases.js";

const ORGANIZATIONS = 50;
const DELIVERIES = 20_000;

let databases: TestDatabases;
let db: Database;
beforeAll(async () => {
  databases = await testDatabases();
  db = pgDatabase(new pg.Pool({ connectionString: await databases.create(), max: 1 }));
  const org = (g: string) => `'org_' || (${g} % ${ORGANIZATIONS} + 1)`;
  const ago = (g: string) => `now() - ${g} * interval '1 second'`;
  await db.query(
    `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret)
     select 'org_' || g, 'o', now(), 'starter', 10, 'whsec_eA==' from generate_series(1, ${ORGANIZATIONS}) g`,
  );
  await db.query(
    `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute, created_at)
     select 'key_' || g, 'org_' || g, 'live', 'h' || g, 'sk-live-', 10, 120, now() from generate_series(1, ${ORGANIZATIONS}) g`,
  );
  await db.query(
    `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, reserved, unit_price,
       reserved_seconds, charged, created_at, completed_at, webhook_url)
     select 'run_' || g, ${org("g")}, 'key_' || (g % ${ORGANIZATIONS} + 1), 'live', 'lab-d/model-d/reference-to-video',
       '{}', 'failed', 0, 0, 5, 0, ${ago("g")}, ${ago("g")}, 'https://example.com/h' from generate_series(1, ${DELIVERIES}) g`,
  );
  // One delivery in a hundred failed; the rest were delivered at the first attempt.
  await db.query(
    `insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, attempts,
       next_attempt_at, state)
     select 'msg_' || g, 'run_' || g, ${org("g")}, 'live', ${ago("g")}, 'https://example.com/h', 'run.failed', 1, now(),
       case when g % 100 = 0 then 'failed' else 'delivered' end from generate_series(1, ${DELIVERIES}) g`,
  );
  await db.query(
    `insert into webhook_attempts (delivery_id, number, attempted_at, status, error, duration_ms)
     select 'msg_' || g, 1, now(), 200, null, 10 from generate_series(1, ${DELIVERIES}) g`,
  );
  await db.query("analyze");
}, 60_000);
afterAll(async () => {
  await db?.close();
  await databases?.destroy();
});

async function plan(search: Omit<WebhookDeliverySearch, "organizationId" | "environment">): Promise<string> {
  const { text, params } = searchWebhookDeliveriesQuery({
    organizationId: "org_7",
    environment: "live",
    ...search,
  });
  const { rows } = await db.query<{ "QUERY PLAN": string }>(`explain (costs off) ${text}`, params);
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

describe("the delivery log's search plan", () => {
  // A filter that keeps few rows (a state that is rare, one run) may sort what the index found.
  it.each([
    ["a first page", { limit: 21 }, "webhook_deliveries_log", "in order"],
    [
      "a later page",
      { limit: 21, after: { createdAt: new Date(Date.now() - 3_600_000), id: "msg_x" } },
      "webhook_deliveries_log",
      "in order",
    ],
    [
      "a page of failed deliveries",
      { limit: 21, state: "failed" as const },
      "webhook_deliveries_log_state",
      "any",
    ],
    ["a run's deliveries", { limit: 21, runId: "run_7" }, "webhook_deliveries_by_run", "any"],
  ])("reads %s through an index", async (_name, search, index, order) => {
    const text = await plan(search);
    expect(text).toMatch(new RegExp(`(Index Scan using|Bitmap Index Scan on) ${index}\\b`));
    expect(text).not.toMatch(/Seq Scan/);
    if (order === "in order") expect(text).not.toMatch(/Sort/);
    // Each delivery's attempts come from the primary key of webhook_attempts.
    expect(text).toMatch(/Index Scan using webhook_attempts_pkey on webhook_attempts/);
  });
});
