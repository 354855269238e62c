/**
 * A developer's usage (`GET /v1/usage`) against the real server after live and test runs of two
 * models by three keys of one organization, beside another organization's runs: by day, model and
 * key it is the operator's report for the organization (`GET /admin/v1/usage`) field by field,
 * without the vendors' cost and the margin; another organization's runs never appear; CSV carries
 * the same rows; a bad window is a 400 naming the field, and no key a 401.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { accountUsageRow, keyOf } from "./admin-helpers.js";
import { BUSY, C, D, expectError, expectInvalid, fast, IMAGES, keylessRequest } from "./api-fixtures.js";
import { type Tenant, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

/** model-d, 720p, 4 s: 4 x 0.071 = 0.284 USD. */
const inputD = (prompt: string) => ({
  prompt: fast(prompt),
  image_urls: IMAGES,
  duration: "4s",
  resolution: "720p",
});
/** model-c, 720p, 2 s: 2 x 0.049 = 0.098 USD. */
const inputC = (prompt: string) => ({ prompt: fast(prompt), reference_image_urls: IMAGES, duration: 2 });
const GROUPINGS = ["day", "model", "api_key"] as const;

interface AdminRow {
  vendor_cost_usd: string;
  margin_usd: string;
  [field: string]: unknown;
}
/** An operator's row as the organization sees it: without the vendors' cost and the margin. */
const withoutVendorCost = ({ vendor_cost_usd, margin_usd, ...row }: AdminRow) => row;
const row = accountUsageRow;
const byGroup = (a: { group: string }, b: { group: string }) => (a.group < b.group ? -1 : 1);

describe("an organization's usage", () => {
  // Organization U: live keys l1 and l2, test key t1. Organization V: live key v1, test key v2.
  let l1: Tenant;
  let l2: Tenant;
  let t1: Tenant;
  let v1: Tenant;
  let v2: Tenant;
  /** When the workload started, and a window that holds exactly it. */
  let started: string;
  let window: string;

  const run = async (key: Tenant, slug: string, input: object, status: string) => {
    const res = await key.call("POST", `/v1/run/${slug}`, { input, sync: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.status).toBe(status);
  };
  const usage = (key: Tenant, query: string, headers: Record<string, string> = {}) =>
    key.call("GET", `/v1/usage?${query}`, undefined, headers);
  const adminUsage = (query: string) =>
    t.admin("GET", `/admin/v1/usage?organization_id=${l1.organizationId}&${query}`);

  beforeAll(async () => {
    started = new Date().toISOString();
    l1 = await t.tenant(BUSY);
    l2 = await keyOf(t, l1, "live");
    t1 = await keyOf(t, l1, "test");
    v1 = await t.tenant(BUSY);
    v2 = await keyOf(t, v1, "test");
    await run(l1, D, inputD("l1 d"), "succeeded");
    await run(l1, D, inputD("[simulate:fail] l1 d"), "failed");
    await run(l1, C, inputC("l1 c"), "succeeded");
    await run(l2, C, inputC("l2 c"), "succeeded");
    await run(l2, D, inputD("l2 d"), "succeeded");
    await run(t1, D, inputD("t1 d"), "succeeded");
    await run(t1, C, inputC("[simulate:fail] t1 c"), "failed");
    await run(v1, D, inputD("v1 d"), "succeeded");
    await run(v2, C, inputC("v2 c"), "succeeded");
    window = `from=${started}&to=${new Date(Date.now() + 1000).toISOString()}`;
  }, 60_000);
  it("adds the organization's runs up by model and key, live and test, as counted by hand", async () => {
    const byModel = await usage(l1, `group_by=model&${window}`);
    expect(byModel.status, JSON.stringify(byModel.body)).toBe(200);
    expect(byModel.body).toMatchObject({ group_by: "model", organization_id: l1.organizationId });
    expect(byModel.body.data).toEqual([
      row(C, "live", { succeeded: 2 }, 4, "0.196"),
      row(C, "test", { failed: 1 }, 0, "0.00"),
      row(D, "live", { succeeded: 2, failed: 1 }, 8, "0.568"),
      row(D, "test", { succeeded: 1 }, 4, "0.00", "0.284"),
    ]);
    // Through the typed client: JSON unless CSV is asked for.
    const typed = await l1.client.api.GET("/v1/usage", {
      params: { query: { group_by: "api_key", from: started } },
    });
    expect(typed.response.status).toBe(200);
    expect(typeof typed.data === "object" && typed.data.data).toEqual(
      [
        row(l1.apiKeyId, "live", { succeeded: 2, failed: 1 }, 6, "0.382"),
        row(l2.apiKeyId, "live", { succeeded: 2 }, 6, "0.382"),
        row(t1.apiKeyId, "test", { succeeded: 1, failed: 1 }, 4, "0.00", "0.284"),
      ].sort(byGroup),
    );
  });

  it("equals the operator's report for the organization by day, model and key, field by field", async () => {
    for (const groupBy of GROUPINGS) {
      const query = `group_by=${groupBy}&${window}`;
      const admin = await adminUsage(query);
      expect(admin.status, JSON.stringify(admin.body)).toBe(200);
      expect(admin.body.data.length, groupBy).toBeGreaterThan(0);
      // Every key of the organization, live or test, sees the same report.
      for (const key of [l1, l2, t1]) {
        const own = await usage(key, query);
        expect(own.status, JSON.stringify(own.body)).toBe(200);
        expect(own.body, groupBy).toEqual({ ...admin.body, data: admin.body.data.map(withoutVendorCost) });
        for (const group of own.body.data) {
          expect(group).not.toHaveProperty("vendor_cost_usd");
          expect(group).not.toHaveProperty("margin_usd");
        }
      }
    }
    // Without a grouping or a window: by day, over the 30 days before now.
    const byDefault = await usage(l1, "");
    expect(byDefault.body).toMatchObject({ group_by: "day", organization_id: l1.organizationId });
    expect(Date.parse(byDefault.body.to) - Date.parse(byDefault.body.from)).toBe(30 * 86_400_000);
    const days = (await adminUsage(`group_by=day&to=${byDefault.body.to}`)).body.data;
    expect(byDefault.body.data).toEqual(days.map(withoutVendorCost));
  });

  it("never shows another organization's runs, nor this one's to another", async () => {
    for (const groupBy of GROUPINGS) {
      const own = (await usage(l1, `group_by=${groupBy}&${window}`)).body.data;
      expect(own.reduce((sum: number, g: { runs: { total: number } }) => sum + g.runs.total, 0)).toBe(7);
    }
    const groups = (await usage(l1, `group_by=api_key&${window}`)).body.data.map(
      (g: { group: string }) => g.group,
    );
    expect(groups).not.toContain(v1.apiKeyId);
    expect(groups).not.toContain(v2.apiKeyId);
    const other = await usage(v2, `group_by=api_key&${window}`);
    expect(other.body).toMatchObject({ organization_id: v1.organizationId });
    expect(other.body.data).toEqual(
      [
        row(v1.apiKeyId, "live", { succeeded: 1 }, 4, "0.284"),
        row(v2.apiKeyId, "test", { succeeded: 1 }, 2, "0.00", "0.098"),
      ].sort(byGroup),
    );
  });

  it("answers CSV with Accept: text/csv: a header and the same rows, money as the same strings", async () => {
    for (const groupBy of GROUPINGS) {
      const query = `group_by=${groupBy}&${window}`;
      const json = (await usage(l1, query)).body;
      const csv = await usage(l1, query, { accept: "text/csv" });
      expect(csv.status).toBe(200);
      expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      expect(csv.headers.get("vary")).toContain("Accept");
      expect((csv.body as string).endsWith("\r\n")).toBe(true);
      const lines = (csv.body as string).slice(0, -2).split("\r\n");
      expect(lines[0]).toBe(
        "group,environment,runs_total,runs_queued,runs_processing,runs_succeeded,runs_failed," +
          "runs_timeout,runs_cancelled,failures,billed_seconds,spend_usd,priced_usd",
      );
      expect(lines.slice(1)).toEqual(
        json.data.map((g: ReturnType<typeof row>) =>
          [
            g.group,
            g.environment,
            ...Object.values(g.runs),
            g.failures,
            g.billed_seconds,
            g.spend_usd,
            g.priced_usd,
          ].join(","),
        ),
      );
    }
    const preferred = await usage(l1, window, { accept: "application/json;q=0.5, text/csv" });
    expect(preferred.headers.get("content-type")).toMatch(/^text\/csv/);
    for (const accept of ["application/json", "*/*", "text/html"]) {
      const res = await usage(l1, window, { accept });
      expect(res.headers.get("content-type"), accept).toMatch(/^application\/json/);
      expect(res.body.group_by).toBe("day");
    }
    // An empty window is the header alone; an error is JSON whatever was asked for.
    const empty = await usage(l1, `to=${started}`, { accept: "text/csv" });
    expect((empty.body as string).split("\r\n")).toHaveLength(2);
    expectInvalid(await usage(l1, "group_by=week", { accept: "text/csv" }), "query.group_by");
  });

  it("refuses a bad window or grouping with a 400 naming the field, and a missing or unknown key", async () => {
    const now = Date.now();
    const iso = (ms: number) => new Date(ms).toISOString();
    expectInvalid(await usage(l1, `from=${iso(now)}&to=${iso(now)}`), "query.from", "range");
    expectInvalid(await usage(l1, `from=${iso(now)}&to=${iso(now - 1000)}`), "query.from", "range");
    expectInvalid(await usage(l1, `from=${iso(now + 60_000)}`), "query.from", "range");
    expectInvalid(
      await usage(l1, `from=${iso(now - 367 * 86_400_000)}&to=${iso(now)}`),
      "query.from",
      "range",
    );
    const longest = await usage(l1, `from=${iso(now - 366 * 86_400_000)}&to=${iso(now)}`);
    expect(longest.status, JSON.stringify(longest.body)).toBe(200);
    expectInvalid(await usage(l1, "from=yesterday"), "query.from");
    expectInvalid(await usage(l1, "to=2026-13-01T00:00:00Z"), "query.to");
    // The operators' groupings are theirs.
    for (const groupBy of ["provider", "route", "organization", "week"]) {
      expectInvalid(await usage(l1, `group_by=${groupBy}`), "query.group_by");
    }
    const raw = keylessRequest(t);
    expectError(await raw("GET", "/v1/usage"), 401, "unauthorized");
    const unknown = { headers: { authorization: "Key sk-live-nope", accept: "text/csv" } };
    expectError(await raw("GET", "/v1/usage?group_by=model", unknown), 401, "unauthorized");
  });
});
