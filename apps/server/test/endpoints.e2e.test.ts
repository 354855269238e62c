/**
 * Every endpoint end to end: the success path and each documented error, through the typed
 * @refvid/client where it fits and raw HTTP where the status line, headers or exact error body
 * are the point. Every response is also checked against the OpenAPI document (`mismatches`).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ModelSlug, Run } from "@refvid/client";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { type RunningRefvid, startRefvid } from "../src/runtime.js";
import { eventually, rawRequest, type Tenant, useTestRefvid } from "./harness.js";

const A = "lab-a/model-a/reference-to-video" as const;
const B = "lab-b/model-b/reference-to-video" as const;
const C = "lab-c/model-c/reference-to-video" as const;
const D = "lab-d/model-d/reference-to-video" as const;
const IMAGES = ["https://example.com/ref.png"];
const VIDEOS = ["https://example.com/ref.mp4"];
const fast = (text = "a lighthouse at dusk") => `[simulate:delay=0] ${text}`;
const slow = (text = "a slow one") => `[simulate:delay=20000] ${text}`;
const quickD = (prompt = fast()) => ({ prompt, image_urls: IMAGES, duration: "4s" as const });
/** For tenants that poll a lot: the default 120 requests a minute would end the test early. */
const BUSY = { rateLimitPerMinute: 100_000 };

const t = useTestRefvid();

/** A refvid of the test's own on the memory store, beside the suite's: `env` on top of the basics. */
async function startOwnRefvid(env: Record<string, string>, onResponseMismatch?: (error: Error) => void) {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-e2e-own-"));
  const config = loadConfig({
    REFVID_STORE: "memory",
    PORT: "0",
    REFVID_DATA_DIR: dataDir,
    REFVID_SEED_DEMO: "false",
    LOG_LEVEL: "silent",
    ...env,
  });
  const refvid = await startRefvid(config, {
    logger: pino({ level: "silent" }),
    ...(onResponseMismatch ? { onResponseMismatch } : {}),
  });
  return {
    refvid,
    stop: async () => {
      await refvid.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Raw HTTP without the tenant's key (or with any Authorization given). */
const raw = (
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown; base?: string } = {},
) => rawRequest(options.base ?? t.url, method, path, options);

/** The shape of every error this service defines. */
function expectError(res: { status: number; body: any }, status: number, type: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: { type, code: status, message: expect.any(String) } });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}

/** An `invalid_request` naming `field` among its problems. */
function expectInvalid(res: { status: number; body: any }, field: string) {
  expectError(res, 400, "invalid_request");
  expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
}

const NOT_A_RUN = "run_00000000-0000-4000-8000-000000000000";

describe("authentication", () => {
  it.each([
    ["no Authorization header", undefined],
    ["another scheme", "Basic x"],
    ["a key without sk-", "Key notsk"],
    ["an empty Bearer", "Bearer "],
    ["an unknown sk- key", "Key sk-test-thisKeyWasNeverIssuedByThisServer0000000000"],
  ])("%s -> 401 unauthorized", async (_name, authorization) => {
    const res = await raw("GET", "/v1/account", authorization ? { headers: { authorization } } : {});
    expectError(res, 401, "unauthorized");
  });

  it("a revoked key -> 401 unauthorized, on every endpoint", async () => {
    const tenant = await t.tenant();
    expect((await tenant.call("GET", "/v1/account")).status).toBe(200);
    const revoked = await t.admin("DELETE", `/admin/v1/api-keys/${tenant.apiKeyId}`);
    expect(revoked.status).toBe(200);
    expectError(await tenant.call("GET", "/v1/account"), 401, "unauthorized");
    expectError(await tenant.call("POST", `/v1/run/${D}`, { input: quickD() }), 401, "unauthorized");
    expectError(await tenant.call("POST", "/v1/runs/search", {}), 401, "unauthorized");
  });

  it("accepts both `Key sk-…` and `Bearer sk-…`", async () => {
    const tenant = await t.tenant();
    for (const scheme of ["Key", "Bearer"]) {
      const res = await raw("GET", "/v1/account", {
        headers: { authorization: `${scheme} ${tenant.apiKey}` },
      });
      expect(res.status).toBe(200);
      expect((res.body as any).api_key_id).toBe(tenant.apiKeyId);
    }
  });
});

describe("submit", () => {
  it("async: 201 with a queued run, every not-yet-known field null, and the documented headers", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", `/v1/run/${D}`, {
      input: quickD(),
      metadata: { order: "o-1" },
    });
    expect(res.status).toBe(201);
    const run = res.body as Run;
    expect(run.run_id).toMatch(/^run_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(run).toMatchObject({
      endpoint: D,
      model: "reference-to-video",
      capability: "video",
      mode: "reference-to-video",
      status: "queued",
      output: null,
      error: null,
      billing: null,
      progress: null,
      started_at: null,
      completed_at: null,
      elapsed_ms: null,
      metadata: { order: "o-1" },
    });
    expect(Date.parse(run.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(res.headers.get("location")).toBe(`/v1/runs/${run.run_id}`);
    expect(res.headers.get("x-run-id")).toBe(run.run_id);
    expect(res.headers.get("x-concurrency-remaining")).toBe("9");
    expect(res.headers.get("ratelimit-policy")).toBe('"per-key";q=120;w=60');
    expect(res.headers.get("ratelimit")).toMatch(/^"per-key";r=\d+;t=\d+$/);
    expect(res.headers.get("x-request-id")).toMatch(/^req_/);
    const ended = await tenant.client.waitForRun(run.run_id, { pollIntervalMs: 50 });
    expect(ended.status).toBe("succeeded");
  });

  it("sync: 201 with the terminal run; Location and X-Run-Id come before the body", async () => {
    const tenant = await t.tenant();
    const started = Date.now();
    const res = await fetch(`${t.url}/v1/run/${D}`, {
      method: "POST",
      headers: { authorization: `Key ${tenant.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ input: quickD("[simulate:delay=1500] sync"), sync: true }),
    });
    const headersAfter = Date.now() - started;
    expect(res.status).toBe(201);
    const runId = res.headers.get("x-run-id");
    expect(runId).toMatch(/^run_/);
    expect(res.headers.get("location")).toBe(`/v1/runs/${runId}`);
    expect(res.headers.get("x-concurrency-remaining")).toBe("9");
    const run = (await res.json()) as Run;
    const bodyAfter = Date.now() - started;
    expect(headersAfter).toBeLessThan(1000);
    expect(bodyAfter).toBeGreaterThanOrEqual(1400);
    expect(run.run_id).toBe(runId);
    expect(run.status).toBe("succeeded");
    expect(run.billing).toMatchObject({ amount: "0.284", currency: "usd" });

    // The typed client's sync submit returns the terminal run too, whatever its outcome.
    const viaClient = await tenant.client.submit(D, quickD(), { sync: true });
    expect(viaClient.status).toBe("succeeded");
    const failed = await tenant.client.submit(D, quickD(fast("[simulate:fail]")), { sync: true });
    expect(failed).toMatchObject({
      status: "failed",
      error: { type: "provider_error" },
      billing: { amount: "0.00" },
    });
  });

  it("an unknown slug -> 404 model_not_found", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", "/v1/run/lab-x/model-x/reference-to-video", {
      input: { prompt: "x" },
    });
    expectError(res, 404, "model_not_found");
    expect((await tenant.client.getAccount()).concurrency.in_flight).toBe(0);
  });

  it("the generic operation with a known slug submits to that model", async () => {
    const tenant = await t.tenant();
    const { data, response } = await tenant.client.api.POST("/v1/run/{lab}/{model}/{category}", {
      params: { path: { lab: "lab-c", model: "model-c", category: "reference-to-video" } },
      body: { input: { prompt: fast(), reference_image_urls: IMAGES, duration: 1 } },
    });
    expect(response.status).toBe(201);
    expect(data?.endpoint).toBe(C);
    expect(data?.status).toBe("queued");
    const ended = await tenant.client.waitForRun(data?.run_id ?? "", { pollIntervalMs: 50 });
    expect(ended.status).toBe("succeeded");
    // model-c outputs carry no file_name/content_type (interface, "Output object").
    expect(Object.keys(ended.output?.videos[0] ?? {})).toEqual(["url"]);
  });
});

describe("poll and cancel", () => {
  it("polls its own runs; unknown and other organizations' runs are 404 run_not_found", async () => {
    const tenant = await t.tenant();
    const other = await t.tenant();
    const run = await tenant.client.submit(D, quickD());
    const polled = await tenant.call("GET", `/v1/runs/${run.run_id}`);
    expect(polled.status).toBe(200);
    expect(polled.body.run_id).toBe(run.run_id);
    expect(polled.headers.get("ratelimit")).toBeTruthy();
    expect((await tenant.client.getRun(run.run_id)).run_id).toBe(run.run_id);

    expectError(await tenant.call("GET", `/v1/runs/${NOT_A_RUN}`), 404, "run_not_found");
    expectError(await tenant.call("GET", "/v1/runs/run_nope"), 404, "run_not_found");
    expectError(await other.call("GET", `/v1/runs/${run.run_id}`), 404, "run_not_found");
    expectError(await other.call("POST", `/v1/runs/${run.run_id}/cancel`), 404, "run_not_found");
    expectError(await tenant.call("POST", `/v1/runs/${NOT_A_RUN}/cancel`), 404, "run_not_found");
    const theirs = await other.client.searchRuns({ limit: 100 });
    expect(theirs.data.map((r) => r.run_id)).not.toContain(run.run_id);
    await tenant.client.waitForRun(run.run_id, { pollIntervalMs: 50 });
  });

  it("cancels queued and processing runs (200, charged 0.00); a terminal run -> 409 run_not_cancellable", async () => {
    const tenant = await t.tenant(BUSY);
    // The worker takes 4 runs at a time (REFVID_WORKER_CONCURRENCY default), so of 5 long runs
    // at least one waits in the queue.
    const runs: Run[] = [];
    for (let i = 0; i < 5; i++) runs.push(await tenant.client.submit(D, quickD(slow(`run ${i}`))));
    const { queued, processing } = await eventually(
      async () => {
        const now = await Promise.all(runs.map((r) => tenant.client.getRun(r.run_id)));
        const queued = now.find((r) => r.status === "queued");
        const processing = now.find((r) => r.status === "processing");
        return queued && processing ? { queued, processing } : undefined;
      },
      10_000,
      "one queued and one processing run",
    );
    expect(processing.started_at).not.toBeNull();

    for (const target of [queued, processing]) {
      const res = await tenant.call("POST", `/v1/runs/${target.run_id}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        run_id: target.run_id,
        status: "cancelled",
        output: null,
        billing: { amount: "0.00", currency: "usd" },
        error: { type: "cancelled" },
      });
      expect(res.body.completed_at).not.toBeNull();
      expect((await tenant.client.getRun(target.run_id)).status).toBe("cancelled");
    }
    for (const r of runs) await tenant.client.cancelRun(r.run_id).catch(() => {});

    const again = await tenant.call("POST", `/v1/runs/${queued.run_id}/cancel`);
    expectError(again, 409, "run_not_cancellable");
    const done = await tenant.client.submit(D, quickD(), { sync: true });
    expect(done.status).toBe("succeeded");
    expectError(await tenant.call("POST", `/v1/runs/${done.run_id}/cancel`), 409, "run_not_cancellable");
    expect((await tenant.client.getRun(done.run_id)).status).toBe("succeeded");

    const account = await tenant.client.getAccount();
    expect(account.concurrency.in_flight).toBe(0);
    expect(account.wallet.reserved_usd).toBe("0.00");
    expect(account.wallet.total_spent_usd).toBe("0.284");
  });
});

interface PriceCase {
  name: string;
  slug: ModelSlug;
  input: Record<string, unknown>;
  unitPrice: string;
  seconds: number;
  amount: string;
  /** What the run is charged when it differs from the preview (model-a `auto`: 10 s delivered). */
  billed?: { seconds: number; amount: string };
}

// biome-ignore format: one row per case reads best as a table
const PRICES: PriceCase[] = [
  // The eleven tiers.
  { name: "model-a 480p", slug: A, input: { resolution: "480p", duration: "4" }, unitPrice: "0.072", seconds: 4, amount: "0.288" },
  { name: "model-a 720p", slug: A, input: { resolution: "720p", duration: "4" }, unitPrice: "0.162", seconds: 4, amount: "0.648" },
  { name: "model-a 1080p", slug: A, input: { resolution: "1080p", duration: "4" }, unitPrice: "0.398", seconds: 4, amount: "1.592" },
  { name: "model-a 480p with video input", slug: A, input: { resolution: "480p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.043", seconds: 4, amount: "0.172" },
  { name: "model-a 720p with video input", slug: A, input: { resolution: "720p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.097", seconds: 4, amount: "0.388" },
  { name: "model-a 1080p with video input", slug: A, input: { resolution: "1080p", duration: "4", video_urls: VIDEOS }, unitPrice: "0.239", seconds: 4, amount: "0.956" },
  { name: "model-b 480P", slug: B, input: { resolution: "480P", duration: 5 }, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-b 768P", slug: B, input: { resolution: "768P", duration: 5 }, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-c 480p", slug: C, input: { resolution: "480p", duration: 1, reference_image_urls: IMAGES }, unitPrice: "0.035", seconds: 1, amount: "0.035" },
  { name: "model-c 720p", slug: C, input: { resolution: "720p", duration: 1, reference_image_urls: IMAGES }, unitPrice: "0.049", seconds: 1, amount: "0.049" },
  { name: "model-d 720p", slug: D, input: { resolution: "720p", duration: "4s", image_urls: IMAGES }, unitPrice: "0.071", seconds: 4, amount: "0.284" },
  { name: "model-d 1080p", slug: D, input: { resolution: "1080p", duration: "4s", image_urls: IMAGES }, unitPrice: "0.106", seconds: 4, amount: "0.424" },
  // Defaults, and inputs that must not change the price.
  { name: "model-a defaults (720p, auto: reserves 30 s)", slug: A, input: {}, unitPrice: "0.162", seconds: 30, amount: "4.86", billed: { seconds: 10, amount: "1.62" } },
  { name: "model-a generate_audio false", slug: A, input: { duration: "4", generate_audio: false }, unitPrice: "0.162", seconds: 4, amount: "0.648" },
  { name: "model-a 480p with video input, no audio", slug: A, input: { resolution: "480p", duration: "4", video_urls: VIDEOS, generate_audio: false }, unitPrice: "0.043", seconds: 4, amount: "0.172" },
  { name: "model-b defaults (768P, 5 s)", slug: B, input: {}, unitPrice: "0.056", seconds: 5, amount: "0.28" },
  { name: "model-c defaults (720p, 6 s)", slug: C, input: { reference_image_urls: IMAGES }, unitPrice: "0.049", seconds: 6, amount: "0.294" },
  { name: "model-d defaults (720p, 8s)", slug: D, input: { image_urls: IMAGES }, unitPrice: "0.071", seconds: 8, amount: "0.568" },
  { name: "model-d generate_audio false", slug: D, input: { duration: "4s", image_urls: IMAGES, generate_audio: false }, unitPrice: "0.071", seconds: 4, amount: "0.284" },
];

describe("pricing: preview, then the same input submitted", () => {
  it.concurrent.for(PRICES)("$name", async (c, { expect }) => {
    const tenant = await t.tenant(BUSY);
    const input = { prompt: fast(`priced: ${c.name}`), ...c.input } as never;
    const preview = await tenant.client.previewPrice(c.slug, input);
    expect(preview).toMatchObject({
      endpoint: c.slug,
      currency: "usd",
      unit_price: c.unitPrice,
      billable_seconds: c.seconds,
      amount: c.amount,
    });
    if (c.input.video_urls) expect(preview.price_tier).toContain("with video input");

    const run = await tenant.client.submit(c.slug, input, { sync: true });
    expect(run.status, JSON.stringify(run.error)).toBe("succeeded");
    expect(run.billing).toEqual({
      amount: c.billed?.amount ?? preview.amount,
      currency: "usd",
      unit_price: preview.unit_price,
      billable_seconds: c.billed?.seconds ?? preview.billable_seconds,
    });
    const account = await tenant.client.getAccount();
    expect(account.wallet.total_spent_usd).toBe(run.billing?.amount);
    expect(account.wallet.reserved_usd).toBe("0.00");
  });

  it("a preview of an invalid input is 400 and creates no run", async () => {
    const tenant = await t.tenant();
    const res = await tenant.call("POST", "/v1/pricing/preview", {
      endpoint: D,
      input: { prompt: "x", image_urls: IMAGES, duration: "5s" },
    });
    expectInvalid(res, "body.input.duration");
    expect((await tenant.client.searchRuns()).data).toEqual([]);
  });
});

describe("price preview as production serves it (no response checks)", () => {
  let plain: RunningRefvid;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    // No onResponseMismatch: the validator runs as in production.
    ({ refvid: plain, stop } = await startOwnRefvid({ REFVID_ADMIN_TOKEN: t.adminToken }));
  });
  afterAll(() => stop());

  it("answers every body as the fully checked server does", async () => {
    const admin = (path: string, body: unknown) =>
      rawRequest(plain.url, "POST", path, { headers: { authorization: `Bearer ${t.adminToken}` }, body });
    const org = await admin("/admin/v1/organizations", { name: "plain" });
    const orgId = (org.body as { organization_id: string }).organization_id;
    const plainKey = ((await admin(`/admin/v1/organizations/${orgId}/api-keys`, {})).body as { key: string })
      .key;
    const checked = await t.tenant();
    const bodies: unknown[] = [
      { endpoint: D, input: { prompt: "x", image_urls: IMAGES, duration: "4s" } },
      {
        endpoint: "lab-a/model-a/reference-to-video",
        input: { prompt: "x", image_urls: IMAGES, video_urls: IMAGES },
      },
      { input: { prompt: "x" } },
      { endpoint: "lab-x/model-x/reference-to-video", input: { prompt: "x" } },
      { endpoint: D, input: { prompt: "x", image_urls: IMAGES, duration: "5s", extra: 1 } },
      { endpoint: D, input: { prompt: 7 } },
      [],
      "not json",
    ];
    const valid = bodies[0];
    const asked: [string, unknown][] = [
      ...bodies.map((body): [string, unknown] => ["/v1/pricing/preview", body]),
      ["/v1/pricing/preview?bogus=1", valid],
    ];
    for (const [path, body] of asked) {
      const ask = (base: string, key: string) =>
        rawRequest(base, "POST", path, { headers: { authorization: `Key ${key}` }, body });
      const [want, got] = await Promise.all([ask(t.url, checked.apiKey), ask(plain.url, plainKey)]);
      const strip = (answer: { status: number; body: unknown }) =>
        JSON.parse(JSON.stringify(answer.body).replace(/"request_id":"[^"]*"/g, '"request_id":"x"'));
      expect({ status: got.status, body: strip(got) }, `${path} ${JSON.stringify(body)}`).toEqual({
        status: want.status,
        body: strip(want),
      });
    }
  });
});

describe("search", () => {
  let tenant: Tenant;
  const runs: Run[] = [];
  const isFailed = (i: number) => i % 5 === 0;
  const endpointOf = (i: number) => (i % 2 === 0 ? D : C);

  beforeAll(async () => {
    tenant = await t.tenant({ balanceUsd: "400.00", maxConcurrency: 25, ...BUSY });
    for (let i = 0; i < 25; i++) {
      const prompt = fast(`search ${i}${isFailed(i) ? " [simulate:fail]" : ""}`);
      const metadata = { suite: "search", index: String(i), parity: i % 2 === 0 ? "even" : "odd" };
      runs.push(
        endpointOf(i) === D
          ? await tenant.client.submit(D, quickD(prompt), { metadata })
          : await tenant.client.submit(
              C,
              { prompt, reference_image_urls: IMAGES, duration: 1 },
              { metadata },
            ),
      );
    }
    await eventually(
      async () => {
        const page = await tenant.client.searchRuns({ status: ["queued", "processing"] });
        return page.data.length === 0 ? true : undefined;
      },
      20_000,
      "every search run to end",
    );
  });

  const idsOf = (list: Run[]) => list.map((r) => r.run_id);
  const expected = (keep: (i: number) => boolean) =>
    new Set(runs.filter((_r, i) => keep(i)).map((r) => r.run_id));

  it("pages of 10 through next_cursor, newest first", async () => {
    const first = await tenant.client.searchRuns({ limit: 10 });
    expect(first.data).toHaveLength(10);
    expect(first.has_more).toBe(true);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await tenant.client.searchRuns({ limit: 10, cursor: first.next_cursor ?? "" });
    expect(second.data).toHaveLength(10);
    expect(second.has_more).toBe(true);
    const third = await tenant.client.searchRuns({ limit: 10, cursor: second.next_cursor ?? "" });
    expect(third.data).toHaveLength(5);
    expect(third.has_more).toBe(false);
    expect(third.next_cursor).toBeNull();

    const all = [...first.data, ...second.data, ...third.data];
    expect(new Set(idsOf(all))).toEqual(new Set(idsOf(runs)));
    expect(new Set(idsOf(all)).size).toBe(25);
    const times = all.map((r) => Date.parse(r.created_at));
    for (let i = 1; i < times.length; i++) expect(times[i]).toBeLessThanOrEqual(times[i - 1] as number);
    // Submitted one after another: with distinct creation times, newest first is the reverse order.
    if (new Set(times).size === times.length) expect(idsOf(all)).toEqual(idsOf(runs).reverse());
    expect(all.every((r) => r.metadata.suite === "search")).toBe(true);
  });

  it("filters by status, endpoint, creation time and metadata", async () => {
    const search = async (filters: Parameters<typeof tenant.client.searchRuns>[0]) =>
      new Set(idsOf((await tenant.client.searchRuns({ limit: 100, ...filters })).data));

    expect(await search({ status: ["failed"] })).toEqual(expected(isFailed));
    expect(await search({ status: ["succeeded"] })).toEqual(expected((i) => !isFailed(i)));
    expect(await search({ status: ["succeeded", "failed"] })).toEqual(expected(() => true));
    expect(await search({ status: ["cancelled"] })).toEqual(new Set());
    expect(await search({ endpoint: C })).toEqual(expected((i) => endpointOf(i) === C));
    expect(await search({ endpoint: D, status: ["failed"] })).toEqual(
      expected((i) => endpointOf(i) === D && isFailed(i)),
    );
    expect(await search({ metadata: { parity: "even" } })).toEqual(expected((i) => i % 2 === 0));
    expect(await search({ metadata: { index: "7" } })).toEqual(expected((i) => i === 7));
    expect(await search({ metadata: { suite: "search", parity: "odd" } })).toEqual(
      expected((i) => i % 2 === 1),
    );
    expect(await search({ metadata: { suite: "other" } })).toEqual(new Set());

    const pivot = runs[12]?.created_at ?? "";
    const at = (i: number) => Date.parse(runs[i]?.created_at ?? "");
    const after = await search({ created_after: pivot });
    const before = await search({ created_before: pivot });
    expect(after).toEqual(expected((i) => at(i) >= Date.parse(pivot)));
    expect(before).toEqual(expected((i) => at(i) < Date.parse(pivot)));
    expect(after.size + before.size).toBe(25);
    expect(after.has(runs[12]?.run_id ?? "")).toBe(true);
    const window = await search({ created_after: runs[5]?.created_at, created_before: pivot });
    expect(window).toEqual(expected((i) => at(i) >= at(5) && at(i) < Date.parse(pivot)));
  });

  it("rejects a cursor used with other filters, a garbage cursor and limits out of 1-100", async () => {
    const first = await tenant.client.searchRuns({ limit: 10 });
    const cursor = first.next_cursor ?? "";
    expectInvalid(
      await tenant.call("POST", "/v1/runs/search", { limit: 10, cursor, status: ["failed"] }),
      "body.cursor",
    );
    expectInvalid(
      await tenant.call("POST", "/v1/runs/search", { limit: 10, cursor, metadata: { parity: "odd" } }),
      "body.cursor",
    );
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { cursor: "garbage" }), "body.cursor");
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { limit: 0 }), "body.limit");
    expectInvalid(await tenant.call("POST", "/v1/runs/search", { limit: 101 }), "body.limit");
    // The page size is not a filter: the same cursor continues with another limit.
    const next = await tenant.call("POST", "/v1/runs/search", { limit: 15, cursor });
    expect(next.status).toBe(201);
    expect(next.body.data).toHaveLength(15);
    expect(next.body.has_more).toBe(false);
  });

  it("iterateRuns collects every run", async () => {
    const collected: Run[] = [];
    for await (const run of tenant.client.iterateRuns({ limit: 10 })) collected.push(run);
    expect(collected).toHaveLength(25);
    expect(new Set(idsOf(collected))).toEqual(new Set(idsOf(runs)));
    const even: Run[] = [];
    for await (const run of tenant.client.iterateRuns({ limit: 4, metadata: { parity: "even" } }))
      even.push(run);
    expect(new Set(idsOf(even))).toEqual(expected((i) => i % 2 === 0));
  });
});

describe("account and webhook secret", () => {
  it("reports every field; a top-up to 350.00 moves the organization to growth (25 runs)", async () => {
    const tenant = await t.tenant({ balanceUsd: "100.00" });
    const account = await tenant.client.getAccount();
    expect(account).toMatchObject({
      organization_id: tenant.organizationId,
      api_key_id: tenant.apiKeyId,
      environment: "live",
      identity: expect.any(Object),
      wallet: {
        balance_usd: "100.00",
        reserved_usd: "0.00",
        available_usd: "100.00",
        total_spent_usd: "0.00",
        currency: "usd",
      },
      concurrency: { tier: "starter", limit: 10, in_flight: 0, available: 10 },
      rate_limit: { per_minute: 120 },
      api_key_concurrency: { limit: 10, in_flight: 0, available: 10 },
    });
    // Every field of the interface's Account object is there.
    for (const field of [
      "organization_id",
      "api_key_id",
      "environment",
      "identity",
      "wallet.balance_usd",
      "wallet.reserved_usd",
      "wallet.available_usd",
      "wallet.total_spent_usd",
      "wallet.currency",
      "concurrency.tier",
      "concurrency.limit",
      "concurrency.in_flight",
      "concurrency.available",
      "rate_limit.per_minute",
      "api_key_concurrency",
    ]) {
      expect(account, field).toHaveProperty(field.split("."));
    }
    const raw = await tenant.call("GET", "/v1/account");
    expect(raw.status).toBe(200);
    expect(raw.headers.get("ratelimit-policy")).toBe('"per-key";q=120;w=60');

    const topUp = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/top-ups`, {
      amount_usd: "250.00",
    });
    expect(topUp.status).toBe(201);
    expect(topUp.body.organization).toMatchObject({ tier: "growth", concurrency_limit: 25 });
    const after = await tenant.client.getAccount();
    expect(after.concurrency).toMatchObject({ tier: "growth", limit: 25, available: 25 });
    expect(after.wallet).toMatchObject({ balance_usd: "350.00", available_usd: "350.00" });
  });

  it("reports environment test for a test key", async () => {
    const tenant = await t.tenant({ environment: "test" });
    expect(tenant.apiKey).toMatch(/^sk-test-/);
    expect((await tenant.client.getAccount()).environment).toBe("test");
  });

  it("the webhook secret is whsec_…, stable across calls, one per organization", async () => {
    const tenant = await t.tenant();
    const first = await tenant.client.getWebhookSecret();
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    const second = await tenant.call("GET", "/v1/webhooks/secret");
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first);
    const other = await t.tenant();
    expect((await other.client.getWebhookSecret()).secret).not.toBe(first.secret);
  });
});

describe("files", () => {
  let videoUrl: string;
  let size: number;

  beforeAll(async () => {
    const tenant = await t.tenant();
    const run = await tenant.client.submit(D, quickD(), { sync: true });
    videoUrl = run.output?.videos[0]?.url ?? "";
    expect(videoUrl).toMatch(/\/v1\/files\/[^?]+\?expires=\d+&signature=/);
  });

  it("serves the whole video: 200 video/mp4 starting with an ftyp box", async () => {
    const res = await fetch(videoUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    const bytes = Buffer.from(await res.arrayBuffer());
    size = bytes.length;
    expect(Number(res.headers.get("content-length"))).toBe(size);
    expect(bytes.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect(size).toBeGreaterThan(1000);
  });

  it("HEAD gives the headers without a body", async () => {
    const res = await fetch(videoUrl, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("video/mp4");
    expect(Number(res.headers.get("content-length"))).toBe(size);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it("serves byte ranges: 206 with Content-Range, suffix ranges, 416 past the end", async () => {
    const whole = Buffer.from(await (await fetch(videoUrl)).arrayBuffer());
    const head = await fetch(videoUrl, { headers: { range: "bytes=0-99" } });
    expect(head.status).toBe(206);
    expect(head.headers.get("content-range")).toBe(`bytes 0-99/${size}`);
    const headBytes = Buffer.from(await head.arrayBuffer());
    expect(headBytes.length).toBe(100);
    expect(headBytes.equals(whole.subarray(0, 100))).toBe(true);

    const tail = await fetch(videoUrl, { headers: { range: "bytes=-50" } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get("content-range")).toBe(`bytes ${size - 50}-${size - 1}/${size}`);
    const tailBytes = Buffer.from(await tail.arrayBuffer());
    expect(tailBytes.equals(whole.subarray(size - 50))).toBe(true);

    const middle = await fetch(videoUrl, { headers: { range: `bytes=100-` } });
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe(`bytes 100-${size - 1}/${size}`);
    expect((await middle.arrayBuffer()).byteLength).toBe(size - 100);

    const past = await fetch(videoUrl, { headers: { range: `bytes=${size}-` } });
    expect(past.status).toBe(416);
    expect(past.headers.get("content-range")).toBe(`bytes */${size}`);
    // The error body is JSON and says so (the spec's 416 is application/json).
    expect(past.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await past.json()).toMatchObject({ error: { type: "range_not_satisfiable", code: 416 } });
  });

  it("a tampered or incomplete URL -> 403 invalid_file_signature", async () => {
    const url = new URL(videoUrl);
    const signature = url.searchParams.get("signature") ?? "";
    const flipped = `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
    const tampered = new URL(url);
    tampered.searchParams.set("signature", flipped);
    expectError(await raw("GET", `${tampered.pathname}${tampered.search}`), 403, "invalid_file_signature");
    const otherExpiry = new URL(url);
    otherExpiry.searchParams.set("expires", String(Number(url.searchParams.get("expires")) + 3600));
    expectError(
      await raw("GET", `${otherExpiry.pathname}${otherExpiry.search}`),
      403,
      "invalid_file_signature",
    );
    expectError(await raw("GET", url.pathname), 403, "invalid_file_signature");
    expectError(
      await raw("GET", `${url.pathname}?expires=${url.searchParams.get("expires")}`),
      403,
      "invalid_file_signature",
    );
    expectError(await raw("GET", `${url.pathname}?signature=${signature}`), 403, "invalid_file_signature");
  });

  it("an expired URL -> 403 file_url_expired; a signed URL of no file -> 404 file_not_found", async () => {
    // Neither can be made from outside; the server's own signer makes them, as it would have earlier.
    const fileId = new URL(videoUrl).pathname.split("/").pop() ?? "";
    const signer = t.refvid.deps.signer;
    const expired = new URL(signer.url(fileId, new Date(Date.now() - 3 * 86_400_000)));
    expectError(await raw("GET", `${expired.pathname}${expired.search}`), 403, "file_url_expired");
    const missing = new URL(signer.url("file_00000000000000000000000000000000", new Date()));
    expectError(await raw("GET", `${missing.pathname}${missing.search}`), 404, "file_not_found");
  });
});

describe("health", () => {
  it("/healthz and /readyz answer 200 without a key", async () => {
    const health = await raw("GET", "/healthz");
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: "ok" });
    const ready = await raw("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ok", checks: { store: "ok", listen: "ok" } });
  });
});

describe("admin API", () => {
  it("creates and reads organizations; unknown -> 404 organization_not_found", async () => {
    const created = await t.admin("POST", "/admin/v1/organizations", { name: "Acme Studios" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      organization_id: expect.stringMatching(/^org_/),
      name: "Acme Studios",
      tier: "starter",
      concurrency_limit: 10,
      wallet: { balance_usd: "0.00", reserved_usd: "0.00", available_usd: "0.00", currency: "usd" },
    });
    const id = created.body.organization_id as string;
    const read = await t.admin("GET", `/admin/v1/organizations/${id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
    expectError(await t.admin("GET", "/admin/v1/organizations/org_nope"), 404, "organization_not_found");
    expectError(
      await t.admin("POST", "/admin/v1/organizations/org_nope/api-keys", { environment: "test" }),
      404,
      "organization_not_found",
    );
    expectError(
      await t.admin("POST", "/admin/v1/organizations/org_nope/top-ups", { amount_usd: "1.00" }),
      404,
      "organization_not_found",
    );
  });

  it("creates keys per environment, shown once", async () => {
    const org = (await t.admin("POST", "/admin/v1/organizations", { name: "Keys" })).body;
    const test = await t.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
      environment: "test",
      name: "ci",
    });
    expect(test.status).toBe(201);
    expect(test.body).toMatchObject({
      api_key_id: expect.stringMatching(/^key_/),
      organization_id: org.organization_id,
      name: "ci",
      environment: "test",
      max_concurrency: 10,
      rate_limit_per_minute: 120,
      revoked_at: null,
      key: expect.stringMatching(/^sk-test-/),
    });
    expect(test.body.key.startsWith(test.body.key_prefix)).toBe(true);
    const live = await t.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {});
    expect(live.status).toBe(201);
    expect(live.body).toMatchObject({ environment: "live", key: expect.stringMatching(/^sk-live-/) });

    const read = await t.admin("GET", `/admin/v1/organizations/${org.organization_id}`);
    const text = JSON.stringify(read.body);
    expect(text).not.toContain(test.body.key);
    expect(text).not.toContain(live.body.key);
  });

  it("patches a key's caps, which apply to its next submit", async () => {
    const tenant = await t.tenant(BUSY);
    const patched = await t.admin("PATCH", `/admin/v1/api-keys/${tenant.apiKeyId}`, {
      max_concurrency: 1,
      rate_limit_per_minute: 5000,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      api_key_id: tenant.apiKeyId,
      max_concurrency: 1,
      rate_limit_per_minute: 5000,
    });
    expect(patched.body.key).toBeUndefined();
    const first = await tenant.call("POST", `/v1/run/${D}`, { input: quickD(slow()) });
    expect(first.status).toBe(201);
    expect(first.headers.get("x-concurrency-remaining")).toBe("0");
    expect(first.headers.get("ratelimit-policy")).toBe('"per-key";q=5000;w=60');
    const second = await tenant.call("POST", `/v1/run/${D}`, { input: quickD(slow()) });
    expect(second.status).toBe(429);
    expect(second.body).toEqual({
      error: {
        code: "concurrency_limit_exceeded",
        message: expect.any(String),
        scope: "api_key",
        limit: 1,
        in_flight: 1,
      },
    });
    expect(second.headers.get("retry-after")).toMatch(/^\d+$/);
    await tenant.client.cancelRun(first.body.run_id);
    expectError(
      await t.admin("PATCH", "/admin/v1/api-keys/key_nope", { max_concurrency: 2 }),
      404,
      "api_key_not_found",
    );
    expectInvalid(
      await t.admin("PATCH", `/admin/v1/api-keys/${tenant.apiKeyId}`, { max_concurrency: 0 }),
      "body.max_concurrency",
    );
  });

  it("revokes a key (200 with revoked_at; idempotent); unknown -> 404 api_key_not_found", async () => {
    const tenant = await t.tenant();
    const revoked = await t.admin("DELETE", `/admin/v1/api-keys/${tenant.apiKeyId}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ api_key_id: tenant.apiKeyId, revoked_at: expect.any(String) });
    expect(Date.parse(revoked.body.revoked_at)).toBeGreaterThan(Date.now() - 60_000);
    const again = await t.admin("DELETE", `/admin/v1/api-keys/${tenant.apiKeyId}`);
    expect(again.status).toBe(200);
    expect(again.body.revoked_at).toBe(revoked.body.revoked_at);
    expectError(await tenant.call("GET", "/v1/account"), 401, "unauthorized");
    expectError(await t.admin("DELETE", "/admin/v1/api-keys/key_nope"), 404, "api_key_not_found");
  });

  it("tops up (201 with the organization's wallet and tier); bad amounts -> 400 body.amount_usd", async () => {
    const org = (await t.admin("POST", "/admin/v1/organizations", { name: "Wallet" })).body;
    const path = `/admin/v1/organizations/${org.organization_id}/top-ups`;
    const topUp = await t.admin("POST", path, { amount_usd: "349.99", note: "invoice 1" });
    expect(topUp.status).toBe(201);
    expect(topUp.body).toMatchObject({
      top_up_id: expect.stringMatching(/^top_/),
      organization_id: org.organization_id,
      amount_usd: "349.99",
      note: "invoice 1",
      organization: {
        tier: "starter",
        concurrency_limit: 10,
        wallet: { balance_usd: "349.99", available_usd: "349.99" },
      },
    });
    const more = await t.admin("POST", path, { amount_usd: "0.01" });
    expect(more.status).toBe(201);
    expect(more.body.organization).toMatchObject({
      tier: "growth",
      concurrency_limit: 25,
      wallet: { balance_usd: "350.00" },
    });
    for (const amount_usd of ["abc", "0", "-5", "0.000000"]) {
      expectInvalid(await t.admin("POST", path, { amount_usd }), "body.amount_usd");
    }
    expectInvalid(await t.admin("POST", path, {}), "body.amount_usd");
    const read = await t.admin("GET", `/admin/v1/organizations/${org.organization_id}`);
    expect(read.body.wallet.balance_usd).toBe("350.00");
  });

  it("racing top-ups near the lifetime cap: exactly those that fit commit, the rest are 400, the organization stays readable", async () => {
    const tenant = await t.tenant();
    const path = `/admin/v1/organizations/${tenant.organizationId}/top-ups`;
    // The tenant starts with 100.00; fill up to exactly three top-ups below the 5 billion cap.
    for (const amount_usd of ["999999999.00", "999999904.00"]) {
      expect((await t.admin("POST", path, { amount_usd })).status).toBe(201);
    }
    const racing = await Promise.all(
      Array.from({ length: 10 }, () => t.admin("POST", path, { amount_usd: "999999999.00" })),
    );
    expect(racing.filter((res) => res.status === 201)).toHaveLength(3);
    for (const refused of racing.filter((res) => res.status !== 201)) {
      expectInvalid(refused, "body.amount_usd");
      expect(JSON.stringify(refused.body.error.fields)).toContain("past 5000000000.00 USD");
    }
    const read = await t.admin("GET", `/admin/v1/organizations/${tenant.organizationId}`);
    expect(read.status).toBe(200);
    expect(read.body.wallet.balance_usd).toBe("5000000000.00");
    expect((await tenant.call("GET", "/v1/account")).status).toBe(200);
  });

  it("a wrong or missing admin token -> 401 unauthorized; an API key is not an admin token", async () => {
    const tenant = await t.tenant();
    for (const authorization of [
      `Bearer ${"x".repeat(48)}`,
      `Bearer ${tenant.apiKey}`,
      `Key ${t.adminToken}`,
    ]) {
      expectError(
        await raw("POST", "/admin/v1/organizations", { headers: { authorization }, body: { name: "no" } }),
        401,
        "unauthorized",
      );
    }
    expectError(await raw("GET", `/admin/v1/organizations/${tenant.organizationId}`), 401, "unauthorized");
  });

  describe("on a server without REFVID_ADMIN_TOKEN", () => {
    let plain: RunningRefvid;
    let stop: () => Promise<void>;
    const mismatches: Error[] = [];

    beforeAll(async () => {
      ({ refvid: plain, stop } = await startOwnRefvid({}, (error) => mismatches.push(error)));
      expect(plain.deps.config.adminToken).toBeNull();
    });
    afterAll(async () => {
      await stop();
      expect(mismatches).toEqual([]);
    });

    it("every admin call -> 403 admin_api_disabled", async () => {
      const base = plain.url;
      const headers = { authorization: `Bearer ${t.adminToken}` };
      expectError(
        await raw("POST", "/admin/v1/organizations", { base, headers, body: { name: "x" } }),
        403,
        "admin_api_disabled",
      );
      expectError(
        await raw("GET", "/admin/v1/organizations/org_x", { base, headers }),
        403,
        "admin_api_disabled",
      );
      expectError(await raw("DELETE", "/admin/v1/api-keys/key_x", { base }), 403, "admin_api_disabled");
      const health = await raw("GET", "/healthz", { base });
      expect(health.status).toBe(200);
    });
  });
});
