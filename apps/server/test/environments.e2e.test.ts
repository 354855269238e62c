/**
 * Live and test keys of one organization are separate worlds (docs/decisions.md, "Test keys"),
 * against the real server: a test run is free for the wallet but billed on the run, neither world
 * sees, searches or cancels the other's runs, the organization's cap holds for each apart, and an
 * Idempotency-Key never crosses from one to the other.
 */
import { createRefvidClient } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { rawRequest, type Tenant, useTestRefvid } from "./harness.js";

const MODEL_D = "lab-d/model-d/reference-to-video" as const;
const SUBMIT = `/v1/run/${MODEL_D}`;
const FAST = 100_000;
const t = useTestRefvid();

/** A model-d 720p 4 s input: 4 x 0.071 = 0.284 USD. */
const body = (prompt: string) => ({
  input: {
    prompt,
    image_urls: ["https://example.com/a.png"],
    duration: "4s" as const,
    resolution: "720p" as const,
  },
});
const LONG = "held [simulate:delay=20000]";

/** Another key of the tenant's organization, in `environment`. */
async function keyOf(tenant: Tenant, environment: "live" | "test"): Promise<Tenant> {
  const created = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/api-keys`, {
    environment,
    rate_limit_per_minute: FAST,
  });
  expect(created.status).toBe(201);
  const apiKey = created.body.key as string;
  return {
    organizationId: tenant.organizationId,
    apiKeyId: created.body.api_key_id,
    apiKey,
    client: createRefvidClient({ baseUrl: t.url, apiKey, retry: { maxRetries: 0 } }),
    call: (method, path, payload, headers = {}) =>
      rawRequest(t.url, method, path, {
        body: payload,
        headers: { authorization: `Key ${apiKey}`, ...headers },
      }),
  };
}

describe("test keys", () => {
  it("run with an empty wallet, show their price on the run, and never move the wallet", async () => {
    const live = await t.tenant({ balanceUsd: "0", rateLimitPerMinute: FAST });
    const test = await keyOf(live, "test");
    const refused = await live.call("POST", SUBMIT, body("live, no money"));
    expect(refused.status).toBe(400);
    expect(refused.body.error.type).toBe("insufficient_balance");

    const run = await test.client.run(MODEL_D, body("free").input, { pollIntervalMs: 20 });
    expect(run).toMatchObject({
      environment: "test",
      status: "succeeded",
      billing: { amount: "0.284", currency: "usd", billable_seconds: 4 },
    });
    for (const key of [live, test]) {
      expect((await key.client.getAccount()).wallet).toMatchObject({
        balance_usd: "0.00",
        reserved_usd: "0.00",
        total_spent_usd: "0.00",
      });
    }
  });

  it("neither see, search nor cancel live runs, and live keys do not see test runs", async () => {
    const live = await t.tenant({ rateLimitPerMinute: FAST });
    const test = await keyOf(live, "test");
    const liveRun = (await live.call("POST", SUBMIT, body(LONG))).body;
    const testRun = (await test.call("POST", SUBMIT, body(LONG))).body;
    expect([liveRun.environment, testRun.environment]).toEqual(["live", "test"]);

    for (const [key, own, other] of [
      [live, liveRun.run_id, testRun.run_id],
      [test, testRun.run_id, liveRun.run_id],
    ] as const) {
      expect((await key.call("GET", `/v1/runs/${own}`)).status).toBe(200);
      const poll = await key.call("GET", `/v1/runs/${other}`);
      expect(poll.status).toBe(404);
      expect(poll.body.error.type).toBe("run_not_found");
      expect((await key.call("POST", `/v1/runs/${other}/cancel`)).status).toBe(404);
      const search = await key.call("POST", "/v1/runs/search", {});
      expect(search.body.data.map((r: { run_id: string }) => r.run_id)).toEqual([own]);
    }
    // Nothing above ended either run; each key cancels its own.
    expect((await live.call("POST", `/v1/runs/${liveRun.run_id}/cancel`)).body.status).toBe("cancelled");
    expect((await test.call("POST", `/v1/runs/${testRun.run_id}/cancel`)).body.status).toBe("cancelled");
  });

  it("are held to the organization's cap counted apart: a test run never takes a live slot", async () => {
    const live = await t.tenant({ balanceUsd: "100.00", rateLimitPerMinute: FAST });
    const test = await keyOf(live, "test");
    // The starter cap is 10; the live key's own cap is 10 too, so a second live key shows the organization's.
    const liveRuns = await Promise.all(
      Array.from({ length: 10 }, () => live.call("POST", SUBMIT, body(LONG))),
    );
    expect(liveRuns.map((r) => r.status)).toEqual(Array(10).fill(201));
    const secondLive = await keyOf(live, "live");
    const full = await secondLive.call("POST", SUBMIT, body(LONG));
    expect(full.status).toBe(429);
    expect(full.body.error).toMatchObject({ code: "concurrency_limit_exceeded", scope: "organization" });

    const testRuns = await Promise.all(
      Array.from({ length: 10 }, () => test.call("POST", SUBMIT, body(LONG))),
    );
    expect(testRuns.map((r) => r.status)).toEqual(Array(10).fill(201));
    const secondTest = await keyOf(live, "test");
    const testFull = await secondTest.call("POST", SUBMIT, body(LONG));
    expect(testFull.status).toBe(429);
    expect(testFull.body.error).toMatchObject({ scope: "organization", limit: 10, in_flight: 10 });

    expect((await test.client.getAccount()).concurrency).toMatchObject({ in_flight: 10, available: 0 });
    const wallet = (await live.client.getAccount()).wallet;
    expect(wallet.reserved_usd).toBe("2.84"); // the ten live runs only

    for (const [key, runs] of [
      [live, liveRuns],
      [test, testRuns],
    ] as const) {
      await Promise.all(runs.map((r) => key.call("POST", `/v1/runs/${r.body.run_id}/cancel`)));
    }
    expect((await test.client.getAccount()).concurrency.in_flight).toBe(0);
    expect((await live.client.getAccount()).wallet).toMatchObject({
      reserved_usd: "0.00",
      balance_usd: "100.00",
    });
  });

  it("keep Idempotency-Keys apart from live keys of the same organization", async () => {
    const live = await t.tenant({ rateLimitPerMinute: FAST });
    const test = await keyOf(live, "test");
    const headers = { "idempotency-key": "same-key" };
    const first = await live.call("POST", SUBMIT, body("p"), headers);
    const fromTest = await test.call("POST", SUBMIT, body("p"), headers);
    expect([first.status, fromTest.status]).toEqual([201, 201]);
    expect(fromTest.body.run_id).not.toBe(first.body.run_id);
    expect(fromTest.body.environment).toBe("test");
    // Each world replays its own.
    const replayed = await test.call("POST", SUBMIT, body("p"), headers);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body.run_id).toBe(fromTest.body.run_id);
    const liveReplay = await live.call("POST", SUBMIT, body("p"), headers);
    expect(liveReplay.body.run_id).toBe(first.body.run_id);
  });
});
