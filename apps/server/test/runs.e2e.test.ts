/**
 * Runs end to end: submitting (async and sync, by slug and through the generic operation),
 * polling and cancelling, with each documented error. Every response is also checked against
 * the OpenAPI document (`mismatches`).
 */
import type { Run } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { BUSY, C, D, expectError, fast, IMAGES, quickD, slow } from "./api-fixtures.js";
import { eventually, useTestRefvid } from "./harness.js";

const t = useTestRefvid();

const NOT_A_RUN = "run_00000000-0000-4000-8000-000000000000";

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
    // model-c outputs carry no file_name/content_type (interface, "Output object"); refvid's poster
    // URL is an extension every model's output has.
    expect(Object.keys(ended.output?.videos[0] ?? {})).toEqual(["url", "thumbnail_url"]);
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
