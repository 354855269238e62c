/**
 * The operators' usage report and run search, and the public search's key filter, against the real
 * server after a scripted workload of live and test runs in two organizations: the report's figures
 * are the ones the workload adds up to by hand. Then runs that end on named routes with a vendor
 * cost, in two more organizations: their cost and margin by route, model and organization.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatUsd, parseUsd } from "@refvid/core";
import type { RunOutcome } from "@refvid/store";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountUsageRow, keyOf } from "./admin-helpers.js";
import { expectError, expectInvalid } from "./api-fixtures.js";
import { eventually, type Tenant, useTestRefvid } from "./harness.js";

const C = "lab-c/model-c/reference-to-video";
const D = "lab-d/model-d/reference-to-video";
const FAST = 100_000;
/** model-d, 720p, 4 s: 4 x 0.071 = 0.284 USD; the simulator takes `delayMs` over it. */
const inputD = (prompt: string, delayMs = 0) => ({
  prompt: `[simulate:delay=${delayMs}] ${prompt}`,
  image_urls: ["https://example.com/a.png"],
  duration: "4s",
  resolution: "720p",
});
/** model-c, 720p, 2 s: 2 x 0.049 = 0.098 USD. */
const inputC = {
  prompt: "[simulate:delay=0] c",
  reference_image_urls: ["https://example.com/a.png"],
  duration: 2,
};

// model-d runs on a routed simulated provider with a slot cap, so its runs record the provider;
// model-c falls back to REFVID_PROVIDER, which takes no slot: its runs have none ("unassigned").
const dir = mkdtempSync(join(tmpdir(), "refvid-admin-usage-"));
const routing = join(dir, "providers.json");
writeFileSync(
  routing,
  JSON.stringify({
    providers: { "sim-d": { type: "simulated", max_concurrency: 50 } },
    routes: { [D]: [{ provider: "sim-d" }] },
  }),
);
const t = useTestRefvid({ REFVID_PROVIDERS_FILE: routing });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const processing = (key: Tenant, runId: string) =>
  eventually(async () => {
    const run = (await key.call("GET", `/v1/runs/${runId}`)).body;
    return run.status === "processing" ? run : undefined;
  });
/** Until the run holds its provider's slot: a run cancelled before it took one has no provider. */
const onItsProvider = (key: Tenant, runId: string) =>
  eventually(async () => {
    const run = await t.refvid.deps.store.getRun(key.organizationId, runId);
    return run?.status === "processing" && run.provider !== null ? run : undefined;
  });
const usage = (query: string) => t.admin("GET", `/admin/v1/usage?${query}`);
const byGroup = (a: { group: string }, b: { group: string }) => (a.group < b.group ? -1 : 1);
/** A usage row as counted by hand: an organization's figures, and the vendors' cost and the margin. */
const usageGroup = (
  name: string,
  environment: "live" | "test",
  runs: Record<string, number>,
  billed: number,
  money: { spend: string; priced?: string; vendorCost: string; margin: string },
) => ({
  ...accountUsageRow(name, environment, runs, billed, money.spend, money.priced),
  vendor_cost_usd: money.vendorCost,
  margin_usd: money.margin,
});

describe("after a scripted workload", () => {
  // Organization U: live keys l1 and l2 and test key t1. Organization V: live key v1.
  let l1: Tenant;
  let l2: Tenant;
  let t1: Tenant;
  let v1: Tenant;
  let started: string;
  let held: string;
  /** Run ids by key, in the order made. */
  const made: Record<string, string[]> = {};

  const submit = async (key: Tenant, slug: string, input: object, sync = true) => {
    const res = await key.call("POST", `/v1/run/${slug}`, { input, ...(sync ? { sync: true } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    made[key.apiKeyId] = [...(made[key.apiKeyId] ?? []), res.body.run_id];
    return res.body;
  };
  beforeAll(async () => {
    started = new Date().toISOString();
    l1 = await t.tenant({ rateLimitPerMinute: FAST });
    l2 = await keyOf(t, l1, "live");
    t1 = await keyOf(t, l1, "test");
    v1 = await t.tenant({ rateLimitPerMinute: FAST });
    expect((await submit(l1, D, inputD("ok 1"))).status).toBe("succeeded");
    expect((await submit(l1, D, inputD("[simulate:fail] no"))).status).toBe("failed");
    expect((await submit(l1, C, inputC)).status).toBe("succeeded");
    expect((await submit(l1, D, inputD("ok 2"))).status).toBe("succeeded");
    expect((await submit(l2, D, inputD("ok 3"))).status).toBe("succeeded");
    const cancelled = await submit(l2, D, inputD("cancelled", 120_000), false);
    await onItsProvider(l2, cancelled.run_id);
    expect((await l2.call("POST", `/v1/runs/${cancelled.run_id}/cancel`)).body.status).toBe("cancelled");
    held = (await submit(l2, D, inputD("held", 120_000), false)).run_id;
    await onItsProvider(l2, held);
    expect((await submit(t1, D, inputD("test ok"))).status).toBe("succeeded");
    expect((await submit(t1, D, inputD("[simulate:fail] test no"))).status).toBe("failed");
    expect((await submit(v1, D, inputD("other org"))).status).toBe("succeeded");
  }, 60_000);
  afterAll(async () => {
    if (held) await l2.call("POST", `/v1/runs/${held}/cancel`);
  });

  // The worker records no vendor cost for the simulated provider: every margin is the spend.
  const group = (
    name: string,
    environment: "live" | "test",
    runs: Record<string, number>,
    billed: number,
    spend: string,
    priced = spend,
  ) => usageGroup(name, environment, runs, billed, { spend, priced, vendorCost: "0.00", margin: spend });

  it("adds usage up by key, model, provider and day, exactly", async () => {
    const org = `organization_id=${l1.organizationId}`;
    const keys = [
      group(l1.apiKeyId, "live", { succeeded: 3, failed: 1 }, 10, "0.666"),
      group(l2.apiKeyId, "live", { succeeded: 1, cancelled: 1, processing: 1 }, 4, "0.284"),
      group(t1.apiKeyId, "test", { succeeded: 1, failed: 1 }, 4, "0.00", "0.284"),
    ].sort(byGroup);
    const res = await usage(`group_by=api_key&${org}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ group_by: "api_key", organization_id: l1.organizationId });
    expect(Date.parse(res.body.to) - Date.parse(res.body.from)).toBe(30 * 86_400_000);
    expect(res.body.data).toEqual(keys);

    expect((await usage(`group_by=model&${org}`)).body.data).toEqual([
      group(C, "live", { succeeded: 1 }, 2, "0.098"),
      group(D, "live", { succeeded: 3, failed: 1, cancelled: 1, processing: 1 }, 12, "0.852"),
      group(D, "test", { succeeded: 1, failed: 1 }, 4, "0.00", "0.284"),
    ]);
    expect((await usage(`group_by=provider&${org}`)).body.data).toEqual([
      group("sim-d", "live", { succeeded: 3, failed: 1, cancelled: 1, processing: 1 }, 12, "0.852"),
      group("sim-d", "test", { succeeded: 1, failed: 1 }, 4, "0.00", "0.284"),
      group("unassigned", "live", { succeeded: 1 }, 2, "0.098"),
    ]);
    const days = (await usage(`group_by=day&${org}`)).body.data;
    const today = started.slice(0, 10);
    if (days.length === 2) {
      expect(days).toEqual([
        group(today, "live", { succeeded: 4, failed: 1, cancelled: 1, processing: 1 }, 14, "0.95"),
        group(today, "test", { succeeded: 1, failed: 1 }, 4, "0.00", "0.284"),
      ]);
    } else {
      // The workload ran across midnight UTC: the days still add up to the whole.
      expect(days.map((d: { group: string }) => d.group)).toContain(today);
      expect(days.reduce((sum: number, d: { runs: { total: number } }) => sum + d.runs.total, 0)).toBe(9);
    }

    // Every organization, in a window that holds only the workload.
    const window = `from=${started}&to=${new Date(Date.now() + 1000).toISOString()}`;
    const everyone = await usage(`group_by=api_key&${window}`);
    expect(everyone.body).toMatchObject({ from: started, organization_id: null });
    expect(everyone.body.data).toEqual(
      [...keys, group(v1.apiKeyId, "live", { succeeded: 1 }, 4, "0.284")].sort(byGroup),
    );
    expect((await usage(`group_by=model&to=${started}&${org}`)).body.data).toEqual([]);
  });

  it("refuses a bad window or grouping, naming the field, and an unknown organization", async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expectInvalid(await usage(`group_by=day&from=${iso(now)}&to=${iso(now)}`), "query.from", "range");
    expectInvalid(await usage(`group_by=day&from=${iso(now)}&to=${iso(now - 1000)}`), "query.from", "range");
    expectInvalid(await usage(`group_by=day&from=${iso(now + 60_000)}`), "query.from", "range");
    expectInvalid(
      await usage(`group_by=day&from=${iso(now - 367 * 86_400_000)}&to=${iso(now)}`),
      "query.from",
      "range",
    );
    const longest = await usage(`group_by=day&from=${iso(now - 366 * 86_400_000)}&to=${iso(now)}`);
    expect(longest.status, JSON.stringify(longest.body)).toBe(200);
    expectInvalid(await usage("group_by=day&from=yesterday"), "query.from");
    expectInvalid(await usage("group_by=day&to=2026-13-01T00:00:00Z"), "query.to");
    expectInvalid(await usage("group_by=week"), "query.group_by");
    expectInvalid(await usage("from=2026-11-01T00:00:00Z"), "query.group_by");
    expectError(await usage("group_by=day&organization_id=org_nope"), 404, "organization_not_found");
  });

  it("searches runs across organizations with every filter, each with its organization and key", async () => {
    const search = (body: object) => t.admin("POST", "/admin/v1/runs/search", body);
    const ids = async (body: object, limit = 100) => {
      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const res = await search({ ...body, limit, ...(cursor ? { cursor } : {}) });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        pages.push(res.body.data.map((r: { run_id: string }) => r.run_id));
        cursor = res.body.next_cursor ?? undefined;
      } while (cursor);
      return pages;
    };
    const [a1, a2, a3, a4] = made[l1.apiKeyId] as string[];
    const [b1, b2, b3] = made[l2.apiKeyId] as string[];
    const [c1, c2] = made[t1.apiKeyId] as string[];
    const [v] = made[v1.apiKeyId] as string[];
    const ofU = [c2, c1, b3, b2, b1, a4, a3, a2, a1];

    expect(await ids({ organization_id: l1.organizationId }, 4)).toEqual([
      ofU.slice(0, 4),
      ofU.slice(4, 8),
      ofU.slice(8),
    ]);
    expect((await ids({ created_after: started }, 3)).flat()).toEqual([v, ...ofU]);
    expect((await ids({ organization_id: v1.organizationId })).flat()).toEqual([v]);
    expect((await ids({ api_key_id: l1.apiKeyId })).flat()).toEqual([a4, a3, a2, a1]);
    expect((await ids({ organization_id: l1.organizationId, environment: "test" })).flat()).toEqual([c2, c1]);
    expect(
      (await ids({ created_after: started, environment: "live", status: ["failed", "cancelled"] })).flat(),
    ).toEqual([b2, a2]);
    expect((await ids({ created_after: started, endpoint: C })).flat()).toEqual([a3]);
    const createdAt = async (runId: string) => (await l1.call("GET", `/v1/runs/${runId}`)).body.created_at;
    const window = {
      created_after: await createdAt(a2 as string),
      created_before: await createdAt(a4 as string),
    };
    expect((await ids({ organization_id: l1.organizationId, ...window })).flat()).toEqual([a3, a2]);
    expect(
      (
        await ids({
          organization_id: l1.organizationId,
          api_key_id: l2.apiKeyId,
          environment: "live",
          status: ["succeeded", "processing"],
          endpoint: D,
          created_after: started,
          created_before: new Date(Date.now() + 1000).toISOString(),
        })
      ).flat(),
    ).toEqual([b3, b1]);
    expect((await ids({ organization_id: v1.organizationId, api_key_id: l1.apiKeyId })).flat()).toEqual([]);

    const page = await search({ api_key_id: t1.apiKeyId });
    const { route, vendor_cost_usd, ...run } = page.body.data[0];
    expect(run).toEqual({
      ...(await t1.call("GET", `/v1/runs/${c2}`)).body,
      organization_id: l1.organizationId,
      api_key_id: t1.apiKeyId,
    });
    expect(vendor_cost_usd).toBeNull(); // a test run never reaches a vendor
    expect(route === null || typeof route === "string").toBe(true);
    expectError(await search({ organization_id: "org_nope" }), 404, "organization_not_found");
    expectError(await search({ api_key_id: "key_nope" }), 404, "api_key_not_found");
    expectInvalid(await search({ status: ["lost"] }), "body.status[0]");
    expectInvalid(await search({ organization_id: l1.organizationId, cursor: "bm9wZQ" }), "body.cursor");
    const cursor = (await search({ organization_id: l1.organizationId, limit: 1 })).body.next_cursor;
    expectInvalid(await search({ organization_id: v1.organizationId, cursor }), "body.cursor");
  });

  it("filters the public search by one of the organization's keys, never another organization's", async () => {
    const [a1, a2, a3, a4] = made[l1.apiKeyId] as string[];
    const [b1, b2, b3] = made[l2.apiKeyId] as string[];
    const search = async (key: Tenant, body: object) => {
      const res = await key.call("POST", "/v1/runs/search", body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const first = await search(l1, { api_key_id: l2.apiKeyId, limit: 2 });
    expect(first.data.map((r: { run_id: string }) => r.run_id)).toEqual([b3, b2]);
    expect(first.data[0]).not.toHaveProperty("organization_id");
    expect(first.data[0]).not.toHaveProperty("api_key_id");
    const second = await search(l1, { api_key_id: l2.apiKeyId, limit: 2, cursor: first.next_cursor });
    expect(second).toMatchObject({ has_more: false, next_cursor: null });
    expect(second.data.map((r: { run_id: string }) => r.run_id)).toEqual([b1]);
    const own = await search(l2, { api_key_id: l1.apiKeyId, status: ["succeeded"] });
    expect(own.data.map((r: { run_id: string }) => r.run_id)).toEqual([a4, a3, a1]);
    expect(a2).toBeDefined();

    // Another organization's key, a key of the other environment, and no key at all match nothing.
    expect((await search(v1, { api_key_id: l1.apiKeyId })).data).toEqual([]);
    expect((await search(l1, { api_key_id: v1.apiKeyId })).data).toEqual([]);
    expect((await search(l1, { api_key_id: t1.apiKeyId })).data).toEqual([]);
    expect((await search(l1, { api_key_id: "key_nope" })).data).toEqual([]);
    expectInvalid(await l1.call("POST", "/v1/runs/search", { api_key_id: "" }), "body.api_key_id");
  });
});

describe("runs that ended on a route with a vendor cost", () => {
  // Organization W: live key w1. Organization X: live key x1. Each run is taken by the worker and
  // ended through the store under the worker's lease, with its route and vendor cost, as the
  // worker ends a run served by a catalog route.
  let w1: Tenant;
  let x1: Tenant;
  let window: string;
  const ids: Record<string, string> = {};
  let files = 0;

  /** A run of `slug` held by the worker (the simulator takes minutes), then ended with `outcome`. */
  const endOnRoute = async (key: Tenant, name: string, slug: string, input: object, outcome: RunOutcome) => {
    const res = await key.call("POST", `/v1/run/${slug}`, { input });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const runId: string = res.body.run_id;
    ids[name] = runId;
    await processing(key, runId);
    const store = t.refvid.deps.store;
    const held = await store.getRun(key.organizationId, runId);
    const ended = await store.completeRun({
      runId,
      outcome,
      now: new Date(),
      leaseOwner: held?.leaseOwner ?? undefined,
    });
    expect(ended.kind).toBe("completed");
  };
  const paid = (seconds: number, charged: number, route: string, vendorCost: number): RunOutcome => ({
    status: "succeeded",
    output: {
      fileId: `file_e2e${++files}`,
      fileName: "out.mp4",
      contentType: "video/mp4",
      durationSeconds: seconds,
    },
    billableSeconds: seconds,
    charged,
    route,
    vendorCost,
  });

  beforeAll(async () => {
    const started = new Date().toISOString();
    w1 = await t.tenant({ rateLimitPerMinute: FAST });
    x1 = await t.tenant({ rateLimitPerMinute: FAST });
    const heldD = inputD("held on a route", 120_000);
    const heldC = { ...inputC, prompt: "[simulate:delay=120000] c" };
    // model-d 4 s is priced 0.284; its main route costs 0.03024/s, its backup more than the price.
    await endOnRoute(w1, "main", D, heldD, paid(4, 284_000, "sim-d-main", 120_960));
    await endOnRoute(w1, "backup", D, heldD, paid(4, 284_000, "sim-d-backup", 300_000));
    await endOnRoute(w1, "c", C, heldC, paid(2, 98_000, "sim-c", 58_800));
    await endOnRoute(w1, "failed", D, heldD, {
      status: "failed",
      error: {
        type: "provider_error",
        code: 502,
        message: "The model provider could not generate this video.",
      },
      route: "sim-d-main",
    });
    await endOnRoute(x1, "other org", D, heldD, paid(4, 284_000, "sim-d-main", 120_960));
    window = `from=${started}&to=${new Date(Date.now() + 1000).toISOString()}`;
  }, 60_000);

  /** Every row's margin is its spend less its vendor cost, in integer micro-USD. */
  const expectMargins = (rows: { spend_usd: string; vendor_cost_usd: string; margin_usd: string }[]) => {
    for (const row of rows) {
      const spend = parseUsd(row.spend_usd) as number;
      const cost = parseUsd(row.vendor_cost_usd) as number;
      expect(row.margin_usd).toBe(formatUsd(spend - cost));
    }
  };

  it("reports vendor cost and margin by route, model and organization, margins adding up run by run", async () => {
    const byRoute = (await usage(`group_by=route&${window}`)).body.data;
    expect(byRoute).toEqual([
      usageGroup("sim-c", "live", { succeeded: 1 }, 2, {
        spend: "0.098",
        vendorCost: "0.0588",
        margin: "0.0392",
      }),
      usageGroup("sim-d-backup", "live", { succeeded: 1 }, 4, {
        spend: "0.284",
        vendorCost: "0.30",
        margin: "-0.016",
      }),
      usageGroup("sim-d-main", "live", { succeeded: 2, failed: 1 }, 8, {
        spend: "0.568",
        vendorCost: "0.24192",
        margin: "0.32608",
      }),
    ]);
    expectMargins(byRoute);

    const byModel = (await usage(`group_by=model&${window}`)).body.data;
    expect(byModel).toEqual([
      usageGroup(C, "live", { succeeded: 1 }, 2, { spend: "0.098", vendorCost: "0.0588", margin: "0.0392" }),
      usageGroup(D, "live", { succeeded: 3, failed: 1 }, 12, {
        spend: "0.852",
        vendorCost: "0.54192",
        margin: "0.31008",
      }),
    ]);
    expectMargins(byModel);

    const byOrganization = (await usage(`group_by=organization&${window}`)).body.data;
    expect(byOrganization).toEqual(
      [
        usageGroup(w1.organizationId, "live", { succeeded: 3, failed: 1 }, 10, {
          spend: "0.666",
          vendorCost: "0.47976",
          margin: "0.18624",
        }),
        usageGroup(x1.organizationId, "live", { succeeded: 1 }, 4, {
          spend: "0.284",
          vendorCost: "0.12096",
          margin: "0.16304",
        }),
      ].sort(byGroup),
    );
    expectMargins(byOrganization);

    // Each grouping splits the same five runs: the margins add up to the same whole.
    const whole = (rows: { margin_usd: string }[]) =>
      formatUsd(rows.reduce((sum, r) => sum + (parseUsd(r.margin_usd) as number), 0));
    expect([whole(byRoute), whole(byModel), whole(byOrganization)]).toEqual([
      "0.34928",
      "0.34928",
      "0.34928",
    ]);

    expect((await usage(`group_by=route&organization_id=${x1.organizationId}`)).body.data).toEqual([
      usageGroup("sim-d-main", "live", { succeeded: 1 }, 4, {
        spend: "0.284",
        vendorCost: "0.12096",
        margin: "0.16304",
      }),
    ]);
  });

  it("shows each run's route and vendor cost in the operators' search", async () => {
    const res = await t.admin("POST", "/admin/v1/runs/search", { organization_id: w1.organizationId });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const shown = res.body.data.map(
      (r: { run_id: string; route: string | null; vendor_cost_usd: string | null }) => [
        r.run_id,
        r.route,
        r.vendor_cost_usd,
      ],
    );
    expect(shown).toEqual([
      [ids.failed, "sim-d-main", null],
      [ids.c, "sim-c", "0.0588"],
      [ids.backup, "sim-d-backup", "0.30"],
      [ids.main, "sim-d-main", "0.12096"],
    ]);
    // The public Run shows neither.
    const own = await w1.call("GET", `/v1/runs/${ids.main}`);
    expect(own.body).not.toHaveProperty("route");
    expect(own.body).not.toHaveProperty("vendor_cost_usd");
  });
});
