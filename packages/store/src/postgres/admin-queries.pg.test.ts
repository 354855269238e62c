/**
 * The admin API's statements on a Postgres server holding many organizations, keys, top-ups and
 * runs: every list page is read newest first through an index, and a usage report reads only the
 * runs of its window, never the history around it.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { UsageGroupBy } from "../types.js";
import type { Database } from "./database.js";
import { pgDatabase } from "./pg-database.js";
import { PostgresStore } from "./postgres-store.js";
import { listLedgerQuery } from "./queries/ledger.js";
import { listApiKeysQuery } from "./queries/list-api-keys.js";
import { listOrganizationsQuery } from "./queries/list-organizations.js";
import { listTopUpsQuery } from "./queries/list-top-ups.js";
import { searchAllRunsQuery } from "./queries/search-all-runs.js";
import { searchRunsQuery } from "./queries/search-runs.js";
import { usageQuery } from "./queries/usage.js";
import { type TestDatabases, testDatabases } from "./test-databases.js";

const ORGANIZATIONS = 2000;
/** Organizations that have keys, top-ups and runs. */
const ACTIVE = 50;
const KEYS = 20_000;
const TOP_UPS = 20_000;
/** One a minute for about 35 days before BASE. */
const RUNS = 50_000;
const BASE = new Date("2026-11-22T00:00:00.000Z");
const minutesBefore = (m: number) => new Date(BASE.getTime() - m * 60_000);

let databases: TestDatabases;
let db: Database;
beforeAll(async () => {
  databases = await testDatabases();
  db = pgDatabase(new pg.Pool({ connectionString: await databases.create(), max: 1 }));
  const ago = (g: string) => `'${BASE.toISOString()}'::timestamptz - ${g} * interval '1 minute'`;
  const active = (g: string) => `'org_' || (${g} % ${ACTIVE} + 1)`;
  await db.query(
    `insert into organizations (id, name, created_at, tier, concurrency_limit, webhook_secret)
     select 'org_' || g, 'o' || g, ${ago("g")}, 'starter', 10, 'whsec_eA==' from generate_series(1, ${ORGANIZATIONS}) g`,
  );
  await db.query(
    `insert into api_keys (id, organization_id, environment, key_hash, key_prefix, max_concurrency, rate_limit_per_minute,
       created_at, revoked_at)
     select 'key_' || g, ${active("g")}, case when g % 10 = 0 then 'test' else 'live' end, 'h' || g, 'sk-live-', 10, 120,
       ${ago("g")}, case when g % 3 = 0 then ${ago("g")} end from generate_series(1, ${KEYS}) g`,
  );
  await db.query(
    `insert into top_ups (id, organization_id, amount, created_at)
     select 'top_' || g, ${active("g")}, 1000000, ${ago("g")} from generate_series(1, ${TOP_UPS}) g`,
  );
  // Run g is made with key k, and belongs to that key's organization and environment. A quarter of
  // the runs are org_8's live keys': key_7 makes one in ten of those, key_57 the rest.
  const key = `(case when g % 40 = 0 then 7 when g % 4 = 0 then 57 else g % ${KEYS} + 1 end)`;
  await db.query(
    `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, reserved, unit_price,
       reserved_seconds, charged, billable_seconds, created_at, completed_at, provider)
     select 'run_' || g, 'org_' || (${key} % ${ACTIVE} + 1), 'key_' || ${key},
       case when ${key} % 10 = 0 then 'test' else 'live' end, 'lab-d/model-d/reference-to-video', '{}',
       case when g % 7 = 0 then 'failed' else 'succeeded' end, 500000, 100000, 5,
       case when g % 7 = 0 then 0 else 500000 end, case when g % 7 = 0 then 0 else 5 end,
       ${ago("g")}, ${ago("g")}, case when g % 3 = 0 then null else 'fal' end
     from generate_series(1, ${RUNS}) g`,
  );
  // Three ledger entries a run, of its organization and key.
  await db.query(
    `insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, run_id, api_key_id, created_at)
     select 'led_' || lpad(g::text, 19, '0'), 'org_' || (${key} % ${ACTIVE} + 1),
       (array['reservation', 'charge', 'release'])[g % 3 + 1], 1, 1, 1, 'run_' || g, 'key_' || ${key}, ${ago("g")}
     from generate_series(1, ${RUNS} * 3) g`,
  );
  await db.query("analyze");
}, 120_000);
afterAll(async () => {
  await db?.close();
  await databases?.destroy();
});

async function plan({ text, params }: { text: string; params: unknown[] }): Promise<string> {
  const { rows } = await db.query<{ "QUERY PLAN": string }>(`explain (costs off) ${text}`, params);
  return rows.map((r) => r["QUERY PLAN"]).join("\n");
}

const usingIndex = (index: string) =>
  new RegExp(
    `(Index Scan using|Index Scan Backward using|Index Only Scan using|Bitmap Index Scan on) ${index}\\b`,
  );
const later = { createdAt: minutesBefore(600), id: "x" };

describe("the admin lists' plans", () => {
  it.each([
    ["organizations", listOrganizationsQuery({ limit: 21 }), "organizations_list"],
    [
      "organizations, a later page",
      listOrganizationsQuery({ limit: 21, after: later }),
      "organizations_list",
    ],
    ["organizations by name", listOrganizationsQuery({ limit: 21, namePrefix: "o1" }), "organizations_list"],
    ["keys", listApiKeysQuery({ organizationId: "org_7", limit: 21 }), "api_keys_list"],
    [
      "revoked keys",
      listApiKeysQuery({ organizationId: "org_7", limit: 21, revoked: true, after: later }),
      "api_keys_list",
    ],
    ["top-ups", listTopUpsQuery({ organizationId: "org_7", limit: 21, after: later }), "top_ups_list"],
    [
      "a ledger",
      listLedgerQuery({ organizationId: "org_7", limit: 21, after: later }),
      "ledger_by_organization",
    ],
    [
      "a ledger's charges in a window",
      listLedgerQuery({ organizationId: "org_7", kinds: ["charge"], to: BASE, limit: 21 }),
      "ledger_by_organization",
    ],
    ["every ledger", listLedgerQuery({ limit: 21, after: later }), "ledger_entries_pkey"],
  ])("reads %s newest first through an index, unsorted", async (_name, query, index) => {
    const text = await plan(query);
    expect(text).toMatch(usingIndex(index));
    expect(text).not.toMatch(/Seq Scan|Sort/);
  });
});

describe("the ledger", () => {
  it("reads one key's entries through ledger_by_key", async () => {
    // key_123 made a handful of runs: its few entries are found by the index, then ordered.
    const text = await plan(listLedgerQuery({ organizationId: "org_24", apiKeyId: "key_123", limit: 21 }));
    expect(text).toMatch(usingIndex("ledger_by_key"));
    expect(text).not.toMatch(/Seq Scan/);
  });

  it("refuses to change or take away an entry", async () => {
    await expect(
      db.query("update ledger_entries set amount = 2 where id = 'led_0000000000000000001'"),
    ).rejects.toThrow(/never updated or deleted/);
    await expect(db.query("delete from ledger_entries where run_id = 'run_1'")).rejects.toThrow(
      /never updated or deleted/,
    );
  });
});

describe("the run searches' plans", () => {
  it.each([
    ["every run", searchAllRunsQuery({ limit: 21 }), "runs_by_created"],
    ["every run, a later page", searchAllRunsQuery({ limit: 21, after: later }), "runs_by_created"],
    ["every test run", searchAllRunsQuery({ limit: 21, environment: "test" }), "runs_by_created"],
    ["one key's runs", searchAllRunsQuery({ limit: 21, apiKeyId: "key_7" }), "runs_by_api_key"],
    [
      "one key's runs in the organization's search",
      searchRunsQuery({ organizationId: "org_8", environment: "live", apiKeyId: "key_7", limit: 21 }),
      "runs_by_api_key",
    ],
  ])("reads %s newest first through an index, unsorted", async (_name, query, index) => {
    const text = await plan(query);
    expect(text).toMatch(usingIndex(index));
    expect(text).not.toMatch(/Seq Scan|Sort/);
  });

  it("reads one organization's two environments a page each through runs_search, sorting only those", async () => {
    const text = await plan(searchAllRunsQuery({ limit: 21, organizationId: "org_7", after: later }));
    expect(text.match(/Index Scan using runs_search on runs/g)).toHaveLength(2);
    expect(text).not.toMatch(/Seq Scan/);
  });
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Index Cond"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

describe("the usage report", () => {
  // An hour two hours before BASE: runs 121 to 180.
  const from = minutesBefore(180);
  const to = minutesBefore(120);

  it.each([
    ...(["api_key", "model", "provider", "day"] as UsageGroupBy[]).map((g) => [g, undefined] as const),
    ["api_key", "org_7"] as const,
    ["day", "org_7"] as const,
  ])("by %s (organization %s) reads only the runs of its window, through an index", async (groupBy, org) => {
    const query = { from, to, groupBy, ...(org ? { organizationId: org } : {}) };
    const { text, params } = usageQuery(query);
    const { rows } = await db.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `explain (analyze, format json) ${text}`,
      params,
    );
    const nodes = nodesOf((rows[0] as { "QUERY PLAN": [{ Plan: PlanNode }] })["QUERY PLAN"][0].Plan);
    const inWindow = Number(
      (
        await db.query(
          `select count(*) as n from runs where created_at >= $1 and created_at < $2${org ? " and organization_id = $3" : ""}`,
          org ? [from, to, org] : [from, to],
        )
      ).rows[0]?.n,
    );
    expect(inWindow).toBeGreaterThan(0);
    const index = nodes.find((n) => n["Index Name"]);
    expect(index?.["Index Name"]).toBe(org ? "runs_search" : "runs_by_created");
    expect(index?.["Index Cond"]).toMatch(/created_at >=.*created_at </);
    // runs_search is (organization_id, environment, created_at, id): created_at bounds the scan
    // only when both environments are named, else it reads the organization's whole history.
    if (org) expect(index?.["Index Cond"]).toMatch(/environment = ANY/);
    const scans = nodes.filter((n) => n["Relation Name"] === "runs");
    expect(scans.map((n) => n["Node Type"])).not.toContain("Seq Scan");
    const read = scans.reduce(
      (sum, n) =>
        sum +
        n["Actual Rows"] * n["Actual Loops"] +
        (n["Rows Removed by Filter"] ?? 0) +
        (n["Rows Removed by Index Recheck"] ?? 0),
      0,
    );
    expect(read).toBe(inWindow);

    const report = await new PostgresStore({ ...db, close: async () => {} }).usage(query);
    const total = report.reduce((sum, r) => sum + Object.values(r.runs).reduce((a, b) => a + b, 0), 0);
    expect(total).toBe(inWindow);
  });
});
