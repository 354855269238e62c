/**
 * A catalog model priced per run, end to end on the simulated provider: the models list and price
 * preview say the unit, a run reserves its price and a success is charged exactly that whatever
 * its length, a cancelled run releases it whole, and a route's per-run cost is the run's vendor
 * cost in admin usage. Answers about the built-in models' per-second prices stay as they were.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseUsd, formatUsd as usd } from "@refvid/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify as toYaml } from "yaml";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { account } from "./limit-helpers.js";

/** Priced per run and routed nowhere: the simulated provider (REFVID_PROVIDER) serves it. */
const FLAT = "acme/flat-fee/text-to-video";
/** Priced per run, on a route of the file whose vendor also charges per run. */
const ROUTED = "acme/flat-routed/text-to-video";
const BUILT_IN = "lab-d/model-d/reference-to-video";
const LONG = "held [simulate:delay=600000]";

const inputSchema = {
  type: "object",
  additionalProperties: false,
  required: ["prompt"],
  properties: {
    prompt: { type: "string", minLength: 1 },
    duration: { type: "integer", minimum: 1, maximum: 15 },
    resolution: { type: "string", enum: ["720p", "1080p"], default: "720p" },
  },
};
const perRunModel = (name: string) => ({
  name,
  summary: "One price a run, 1 to 15 s.",
  input_schema: inputSchema,
  fields: { prompt: "prompt", duration: "duration", resolution: "resolution" },
  max_duration_seconds: 15,
});
const CATALOG = {
  providers: { sim: { type: "simulated" } },
  models: {
    [FLAT]: {
      ...perRunModel("Flat fee"),
      pricing: [
        { when: { resolution: "720p" }, usd_per_run: "1.25" },
        { when: { resolution: "1080p" }, usd_per_run: "2.00" },
      ],
    },
    [ROUTED]: {
      ...perRunModel("Flat fee, routed"),
      pricing: [{ usd_per_run: "0.80" }],
      routes: [{ name: "sim-flat", provider: "sim", cost: { usd_per_run: "0.30" } }],
    },
  },
};

let dir: string;
let t: TestRefvid;
let tenant: Tenant;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-per-run-"));
  const file = join(dir, "catalog.yaml");
  await writeFile(file, toYaml(CATALOG));
  t = await startTestRefvid({ REFVID_CATALOG_FILE: file });
  tenant = await t.tenant({ balanceUsd: "10.00", rateLimitPerMinute: 10_000 });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await rm(dir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
}, 60_000);

describe("a model priced per run", () => {
  it("lists its prices per run; a built-in model's stay per second, field for field", async () => {
    const flat = await tenant.call("GET", `/v1/models/${FLAT}`);
    expect(flat.status).toBe(200);
    expect(flat.body.pricing).toEqual({
      currency: "usd",
      unit: "run",
      tiers: [
        { tier: "720p", when: { resolution: "720p" }, usd_per_run: "1.25" },
        { tier: "1080p", when: { resolution: "1080p" }, usd_per_run: "2.00" },
      ],
    });
    const builtIn = await tenant.call("GET", `/v1/models/${BUILT_IN}`);
    expect(builtIn.body.pricing).toEqual({
      currency: "usd",
      unit: "second",
      tiers: [
        { tier: "720p", when: { resolution: "720p" }, usd_per_second: "0.071" },
        { tier: "1080p", when: { resolution: "1080p" }, usd_per_second: "0.106" },
      ],
    });
  });

  it.each([
    ["a duration", { prompt: "p", duration: 4 }, 4, "1.25", "720p"],
    ["auto: the longest", { prompt: "p" }, 15, "1.25", "720p"],
    ["another tier", { prompt: "p", duration: 6, resolution: "1080p" }, 6, "2.00", "1080p"],
  ])("previews the run's price whatever its length: %s", async (_name, input, seconds, price, tier) => {
    const res = await tenant.call("POST", "/v1/pricing/preview", { endpoint: FLAT, input });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      endpoint: FLAT,
      currency: "usd",
      unit_price: price,
      billable_seconds: seconds,
      amount: price,
      unit: "run",
      price_tier: tier,
    });
  });

  it("previews a built-in model's price without a unit, as the interface does", async () => {
    const res = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: BUILT_IN,
      input: { prompt: "p", duration: "4s", image_urls: ["https://example.com/a.png"] },
    });
    expect(res.body).toEqual({
      endpoint: BUILT_IN,
      currency: "usd",
      unit_price: "0.071",
      billable_seconds: 4,
      amount: "0.284",
      price_tier: "720p",
    });
  });

  it("holds the run's price while it is in flight and releases it whole when it is cancelled", async () => {
    const before = (await account(tenant.call)).wallet;
    const submitted = await tenant.call("POST", `/v1/run/${FLAT}`, {
      input: { prompt: LONG, duration: 6, resolution: "1080p" },
    });
    expect(submitted.status).toBe(201);
    expect((await account(tenant.call)).wallet).toMatchObject({
      balance_usd: before.balance_usd,
      reserved_usd: "2.00",
      available_usd: usd(micros(before.available_usd) - 2_000_000),
    });

    const cancelled = await tenant.call("POST", `/v1/runs/${submitted.body.run_id}/cancel`);
    expect(cancelled.status).toBe(200);
    const ended = await eventually(async () => {
      const run = await tenant.call("GET", `/v1/runs/${submitted.body.run_id}`);
      return run.body.status === "cancelled" ? run.body : undefined;
    }, 30_000);
    expect(ended.billing).toEqual({
      amount: "0.00",
      currency: "usd",
      unit_price: "2.00",
      billable_seconds: 0,
      unit: "run",
    });
    expect((await account(tenant.call)).wallet).toEqual(before);
  });

  it.each([
    // The simulated provider makes an `auto` run 10 s long: 10 of the 15 s reserved, the same price.
    ["shorter than reserved", { prompt: "auto" }, 10, "1.25"],
    ["as long as reserved", { prompt: "six", duration: 6, resolution: "1080p" }, 6, "2.00"],
  ])("charges a success exactly the run's price: %s", async (_name, input, seconds, price) => {
    const before = (await account(tenant.call)).wallet;
    const res = await tenant.call("POST", `/v1/run/${FLAT}`, { input, sync: true });
    expect(res.status).toBe(201);
    expect(res.body.status).toBe("succeeded");
    expect(res.body.billing).toEqual({
      amount: price,
      currency: "usd",
      unit_price: price,
      billable_seconds: seconds,
      unit: "run",
    });
    const after = (await account(tenant.call)).wallet;
    expect(after).toMatchObject({
      balance_usd: usd(micros(before.balance_usd) - micros(price)),
      reserved_usd: "0.00",
      total_spent_usd: usd(micros(before.total_spent_usd) + micros(price)),
    });
  });
});

describe("a route that charges per run", () => {
  it("records its per-run cost as the run's vendor cost, and admin usage shows the margin", async () => {
    const res = await tenant.call("POST", `/v1/run/${ROUTED}`, {
      input: { prompt: "routed", duration: 12 },
      sync: true,
    });
    expect(res.body).toMatchObject({ status: "succeeded", billing: { amount: "0.80", unit: "run" } });

    const runs = await t.admin("POST", "/admin/v1/runs/search", {
      organization_id: tenant.organizationId,
      endpoint: ROUTED,
    });
    expect(runs.body.data).toMatchObject([{ route: "sim-flat", vendor_cost_usd: "0.30" }]);

    const usage = await t.admin(
      "GET",
      `/admin/v1/usage?group_by=route&organization_id=${tenant.organizationId}`,
    );
    expect(usage.status).toBe(200);
    expect(usage.body.data.find((row: { group: string }) => row.group === "sim-flat")).toMatchObject({
      environment: "live",
      billed_seconds: 12,
      spend_usd: "0.80",
      priced_usd: "0.80",
      vendor_cost_usd: "0.30",
      margin_usd: "0.50",
    });
  });
});

/** An amount of the API as micro-USD: read exactly, never through a float. */
function micros(amount: string): number {
  const value = parseUsd(amount);
  if (value === null) throw new Error(`not an amount of USD: ${amount}`);
  return value;
}
