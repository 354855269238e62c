/**
 * `GET /metrics` end to end: a scripted workload on a real server (runs that succeed, one that
 * fails, submits refused for balance and for the rate limit, a webhook whose receiver fails once),
 * then a scrape, parsed as Prometheus would, and its counts and labels checked. Also the token,
 * the store-wide gauges on a process without a worker, and a worker-only process serving it.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { ManualClock } from "../src/manual-clock.js";
import {
  eventually,
  type Receiver,
  rawRequest,
  startReceiver,
  startTestRefvid,
  type Tenant,
  type TestRefvid,
} from "./harness.js";
import { checkExposition, samplesOf, sampleValue } from "./scrape.js";

const MODEL_D = "lab-d/model-d/reference-to-video";
const SUBMIT_ROUTE = "/v1/run/:lab/:model/:category";
const TOKEN = randomBytes(24).toString("hex");

const input = (prompt: string) => ({
  prompt: `[simulate:delay=0] ${prompt}`,
  image_urls: ["https://example.com/ref.png"],
  duration: "4s" as const,
});

const servers: TestRefvid[] = [];
let t: TestRefvid;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestRefvid({ REFVID_METRICS_TOKEN: TOKEN });
  servers.push(t);
  // Fails the first delivery, takes the retry.
  receiver = await startReceiver((_request, res, index) => {
    res.writeHead(index === 0 ? 500 : 200).end();
  });
});

afterAll(async () => {
  await receiver.close();
  await Promise.all(servers.map((s) => s.close()));
  for (const s of servers) expect(s.mismatches).toEqual([]);
});

const scrape = async (server: TestRefvid, headers: Record<string, string> = {}) =>
  rawRequest(server.url, "GET", "/metrics", { headers });

describe("GET /metrics after a workload", () => {
  let text = "";
  let tenants: Tenant[] = [];
  const runIds: string[] = [];

  beforeAll(async () => {
    const live = await t.tenant();
    const broke = await t.tenant({ balanceUsd: "0" });
    const limited = await t.tenant({ rateLimitPerMinute: 1 });
    tenants = [live, broke, limited];
    const submit = async (tenant: Tenant, body: object, status: number) => {
      const res = await tenant.call("POST", `/v1/run/${MODEL_D}`, body);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      if (res.body?.run_id) runIds.push(res.body.run_id);
      return res.body;
    };
    expect(await submit(live, { input: input("one"), sync: true }, 201)).toMatchObject({
      status: "succeeded",
    });
    expect(await submit(live, { input: input("two"), sync: true }, 201)).toMatchObject({
      status: "succeeded",
    });
    expect(await submit(live, { input: input("[simulate:fail] three"), sync: true }, 201)).toMatchObject({
      status: "failed",
    });
    const hooked = await submit(
      live,
      { input: input("four"), sync: true, webhook_url: `${receiver.url}/hook` },
      201,
    );
    expect(hooked).toMatchObject({ status: "succeeded" });
    await submit(broke, { input: input("five") }, 400); // insufficient_balance
    await submit(limited, { input: input("six"), sync: true }, 201);
    await submit(limited, { input: input("seven") }, 429); // the key's one request a minute is spent
    const anonymous = await rawRequest(t.url, "GET", "/v1/runs/run_unknown", {
      headers: { authorization: "Key sk-live-unknown" },
    });
    expect(anonymous.status).toBe(401);
    expect((await rawRequest(t.url, "GET", "/nowhere")).status).toBe(404);

    // The retry is delivered (and both attempts recorded) before the scrape.
    await receiver.waitFor(2);
    await eventually(async () => {
      const log = await live.call("GET", `/v1/webhooks/deliveries?run_id=${hooked.run_id}`);
      return log.body.data?.[0]?.state === "delivered" ? true : undefined;
    });
    const res = await scrape(t, { authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    text = res.text;
  });

  it("is a valid Prometheus exposition with every family typed and described", () => {
    const families = checkExposition(text);
    const names = families.map((f) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "refvid_http_request_duration_seconds",
        "refvid_runs_admitted_total",
        "refvid_runs_rejected_total",
        "refvid_runs_ended_total",
        "refvid_worker_runs_in_flight",
        "refvid_runs_queued",
        "refvid_runs_queued_oldest_age_seconds",
        "refvid_runs_processing",
        "refvid_provider_call_duration_seconds",
        "refvid_provider_errors_total",
        "refvid_webhook_attempts_total",
        "refvid_webhook_deliveries_failed_total",
        "refvid_webhook_backlog",
        "refvid_wallet_reserved_usd",
        // prom-client's process metrics, on this process's own registry
        "process_cpu_user_seconds_total",
        "nodejs_eventloop_lag_seconds",
      ]),
    );
  });

  it("counts runs admitted, rejected by reason, and ended by model, provider and status", () => {
    // Every model and reason has its series from the start; only model-d ran.
    expect(samplesOf(text, "refvid_runs_admitted_total")).toHaveLength(4);
    expect(sampleValue(text, "refvid_runs_admitted_total", { model: MODEL_D })).toBe(5);
    expect(
      sampleValue(text, "refvid_runs_admitted_total", { model: "lab-a/model-a/reference-to-video" }),
    ).toBe(0);
    expect(sampleValue(text, "refvid_runs_rejected_total", { reason: "api_key" })).toBe(0);
    expect(sampleValue(text, "refvid_runs_rejected_total", { reason: "balance" })).toBe(1);
    expect(sampleValue(text, "refvid_runs_rejected_total", { reason: "rate_limit" })).toBe(1);
    expect(samplesOf(text, "refvid_runs_ended_total")).toEqual(
      expect.arrayContaining([
        { labels: { model: MODEL_D, provider: "simulated", status: "succeeded" }, value: 4 },
        { labels: { model: MODEL_D, provider: "simulated", status: "failed" }, value: 1 },
      ]),
    );
    expect(samplesOf(text, "refvid_runs_ended_total")).toHaveLength(2);
  });

  it("times provider calls and counts their errors by provider", () => {
    const calls = "refvid_provider_call_duration_seconds_count";
    expect(sampleValue(text, calls, { provider: "simulated", outcome: "succeeded" })).toBe(4);
    expect(sampleValue(text, calls, { provider: "simulated", outcome: "failed" })).toBe(1);
    expect(samplesOf(text, "refvid_provider_errors_total")).toEqual([
      { labels: { provider: "simulated" }, value: 1 },
    ]);
  });

  it("counts webhook attempts by result; nothing given up, nothing left pending", () => {
    expect(sampleValue(text, "refvid_webhook_attempts_total", { result: "http_error" })).toBe(1);
    expect(sampleValue(text, "refvid_webhook_attempts_total", { result: "delivered" })).toBe(1);
    expect(sampleValue(text, "refvid_webhook_attempts_total", { result: "timeout" })).toBe(0);
    expect(sampleValue(text, "refvid_webhook_deliveries_failed_total")).toBe(0);
    expect(sampleValue(text, "refvid_webhook_backlog")).toBe(0);
  });

  it("reads the store-wide gauges at scrape: nothing queued, processing or reserved once all ended", () => {
    expect(sampleValue(text, "refvid_runs_queued")).toBe(0);
    expect(sampleValue(text, "refvid_runs_queued_oldest_age_seconds")).toBe(0);
    expect(sampleValue(text, "refvid_runs_processing")).toBe(0);
    expect(sampleValue(text, "refvid_worker_runs_in_flight")).toBe(0);
    expect(sampleValue(text, "refvid_wallet_reserved_usd")).toBe(0);
  });

  it("labels requests with the route template Express matched, also when refused before the route", () => {
    const count = "refvid_http_request_duration_seconds_count";
    expect(sampleValue(text, count, { method: "POST", route: SUBMIT_ROUTE, status: "201" })).toBe(5);
    expect(sampleValue(text, count, { method: "POST", route: SUBMIT_ROUTE, status: "400" })).toBe(1);
    // Refused by the rate limit and by authentication, before routing: the same templates.
    expect(sampleValue(text, count, { method: "POST", route: SUBMIT_ROUTE, status: "429" })).toBe(1);
    expect(sampleValue(text, count, { method: "GET", route: "/v1/runs/:run_id", status: "401" })).toBe(1);
    expect(sampleValue(text, count, { method: "GET", route: "unmatched", status: "404" })).toBe(1);
    const routes = new Set(samplesOf(text, count).map((s) => s.labels.route));
    for (const route of routes) expect(route).toMatch(/^(\/[a-z0-9_/:-]*|unmatched)$/);
    expect(
      [...routes].filter((route) => /(run|org|key)_[0-9a-f]{6}|run_unknown|nowhere/.test(route ?? "")),
    ).toEqual([]);
  });

  it("never names an organization, key or run", () => {
    for (const tenant of tenants) {
      expect(text).not.toContain(tenant.organizationId);
      expect(text).not.toContain(tenant.apiKeyId);
    }
    for (const id of runIds) expect(text).not.toContain(id);
    expect(text).not.toMatch(/"(org|key|run|msg)_[0-9a-f]/);
  });
});

describe("the metrics token", () => {
  it("is required when REFVID_METRICS_TOKEN is set: 401 without it or with another", async () => {
    const attempts: Record<string, string>[] = [
      {},
      { authorization: "Bearer not-the-token-at-all" },
      { authorization: TOKEN }, // no scheme
    ];
    for (const headers of attempts) {
      const res = await scrape(t, headers);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ error: { type: "unauthorized", code: 401 } });
      expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    }
    expect((await scrape(t, { authorization: `bearer ${TOKEN}` })).status).toBe(200);
  });

  it("takes no API key, so no rate limit applies however often it is scraped", async () => {
    for (let i = 0; i < 5; i++) {
      const res = await scrape(t, { authorization: `Bearer ${TOKEN}` });
      expect(res.status).toBe(200);
      expect(res.headers.get("ratelimit")).toBeNull();
    }
  });

  it("must be at least 16 characters", () => {
    expect(() => loadConfig({ REFVID_METRICS_TOKEN: "short" })).toThrow(ConfigError);
    expect(() => loadConfig({ REFVID_METRICS_TOKEN: "short" })).toThrow(
      /REFVID_METRICS_TOKEN: must be at least 16 characters/,
    );
  });
});

describe("a process without a worker, and without a token", () => {
  it("serves /metrics openly, with the queue, its oldest run's age and the reservations", async () => {
    const clock = new ManualClock(new Date("2030-01-01T00:00:00.000Z"));
    const api = await startTestRefvid({ REFVID_ROLE: "api" }, { clock, scheduler: clock });
    servers.push(api);
    const tenant = await api.tenant();
    const queued: string[] = [];
    for (const prompt of ["first", "second"]) {
      const res = await tenant.call("POST", `/v1/run/${MODEL_D}`, { input: input(prompt) });
      expect(res.status).toBe(201);
      queued.push(res.body.run_id);
      await clock.advance(30_000);
    }
    await clock.advance(60_000); // the first run has waited 120 s, the second 90 s
    const res = await scrape(api);
    expect(res.status).toBe(200);
    checkExposition(res.text);
    expect(sampleValue(res.text, "refvid_runs_queued")).toBe(2);
    expect(sampleValue(res.text, "refvid_runs_queued_oldest_age_seconds")).toBe(120);
    expect(sampleValue(res.text, "refvid_runs_processing")).toBe(0);
    const account = await tenant.call("GET", "/v1/account");
    const reserved = Number(account.body.wallet.reserved_usd);
    expect(reserved).toBeGreaterThan(0);
    expect(sampleValue(res.text, "refvid_wallet_reserved_usd")).toBeCloseTo(reserved, 6);

    // A cancel ends the first run here, in the API process: counted, with no provider.
    expect((await tenant.call("POST", `/v1/runs/${queued[0]}/cancel`)).status).toBe(200);
    const after = (await scrape(api)).text;
    expect(sampleValue(after, "refvid_runs_queued")).toBe(1);
    expect(sampleValue(after, "refvid_runs_queued_oldest_age_seconds")).toBe(90);
    expect(samplesOf(after, "refvid_runs_ended_total")).toEqual([
      { labels: { model: MODEL_D, provider: "none", status: "cancelled" }, value: 1 },
    ]);
  });

  it("is served by a worker-only process too, on its own port", async () => {
    const worker = await startTestRefvid({ REFVID_ROLE: "worker" });
    servers.push(worker);
    const res = await scrape(worker);
    expect(res.status).toBe(200);
    checkExposition(res.text);
    expect(sampleValue(res.text, "refvid_worker_runs_in_flight")).toBe(0);
    expect((await rawRequest(worker.url, "GET", "/v1/account")).status).toBe(404);
  });
});
