/**
 * The wallet against the real server: the balance under parallel load, never shown negative, and
 * runs that end without delivering (failed, cancelled, timed out) charged nothing.
 */
import { describe, expect, it } from "vitest";
import { type RawResponse, startTestRefvid, type Tenant, useTestRefvid } from "./harness.js";
import {
  account,
  cancelInFlight,
  expectConcurrency429,
  FAST,
  LONG,
  SUBMIT,
  submitBody,
  waitTerminal,
} from "./limit-helpers.js";

const t = useTestRefvid();

const micros = (usd: string) => {
  expect(usd).toMatch(/^-?\d+\.\d{2,6}$/);
  return Math.round(Number(usd) * 1_000_000);
};

describe("wallet under parallel load", () => {
  it("admits only what the balance covers and never shows a negative available amount", async () => {
    const tenant = await t.tenant({ balanceUsd: "1.00", rateLimitPerMinute: FAST });
    const samples: { balance_usd: string; reserved_usd: string; available_usd: string }[] = [];
    let flying = true;
    const sampler = (async () => {
      while (flying) samples.push((await account(tenant.call)).wallet);
    })();

    let responses: RawResponse[];
    try {
      responses = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          tenant.call("POST", SUBMIT, submitBody(`wallet [simulate:delay=800] #${i}`)),
        ),
      );
      const admitted = responses.filter((res) => res.status === 201);
      expect(admitted).toHaveLength(3);
      const rejected = responses.filter((res) => res.status !== 201);
      expect(rejected).toHaveLength(17);
      for (const res of rejected) {
        expect(res.status).toBe(400);
        expect(res.body.error).toMatchObject({
          type: "insufficient_balance",
          code: 400,
          required_usd: "0.284",
        });
        expect(res.body.error.available_usd).toMatch(/^\d+\.\d{2,6}$/);
        // Only charges that equal their reservations happen meanwhile: 1.00 - 3 x 0.284.
        expect(res.body.error.available_usd).toBe("0.148");
      }
      const ended = await waitTerminal(
        tenant.call,
        admitted.map((res) => res.body.run_id),
      );
      for (const run of ended) {
        expect(run.status).toBe("succeeded");
        expect(run.billing).toMatchObject({ amount: "0.284", currency: "usd" });
      }
    } finally {
      flying = false;
      await sampler;
    }

    // The sampler saw the runs in flight, not only before and after.
    expect(samples.some((sample) => micros(sample.reserved_usd) > 0)).toBe(true);
    for (const sample of samples) {
      expect(sample.available_usd.startsWith("-")).toBe(false);
      expect(micros(sample.available_usd)).toBeGreaterThanOrEqual(0);
      expect(micros(sample.balance_usd) - micros(sample.reserved_usd)).toBe(micros(sample.available_usd));
    }
    const wallet = (await account(tenant.call)).wallet;
    expect(wallet).toMatchObject({
      balance_usd: "0.148",
      reserved_usd: "0.00",
      available_usd: "0.148",
      total_spent_usd: "0.852",
    });
  });
});

describe("runs that end without delivering", () => {
  const expectUncharged = async (tenant: Tenant, run: { billing: unknown; output: unknown }) => {
    expect(run.billing).toMatchObject({ amount: "0.00", currency: "usd" });
    expect(run.output).toBeNull();
    const acct = await account(tenant.call);
    expect(acct.wallet).toMatchObject({
      balance_usd: "10.00",
      reserved_usd: "0.00",
      available_usd: "10.00",
      total_spent_usd: "0.00",
    });
    expect(acct.concurrency).toMatchObject({ in_flight: 0 });
    expect(acct.api_key_concurrency).toEqual({ limit: 1, in_flight: 0, available: 1 });
  };

  it("a failed run is not charged and frees its reservation and slot", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
    const submitted = await tenant.call("POST", SUBMIT, submitBody("[simulate:fail] [simulate:delay=200]"));
    expect(submitted.status).toBe(201);
    const inFlight = await account(tenant.call);
    expect(inFlight.wallet).toMatchObject({ reserved_usd: "0.284", available_usd: "9.716" });
    const [run] = await waitTerminal(tenant.call, [submitted.body.run_id]);
    expect(run.status).toBe("failed");
    expect(run.error).toMatchObject({ type: "provider_error" });
    await expectUncharged(tenant, run);
    // The one slot is free again.
    const next = await tenant.call("POST", SUBMIT, submitBody("[simulate:delay=50] after a failure"));
    expect(next.status).toBe(201);
    await waitTerminal(tenant.call, [next.body.run_id]);
  });

  it("a cancelled run is not charged and frees its reservation and slot", async () => {
    const tenant = await t.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      const submitted = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(submitted.status).toBe(201);
      const blocked = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expectConcurrency429(blocked, "api_key", 1, 1);
      expect((await account(tenant.call)).wallet).toMatchObject({ reserved_usd: "0.284" });

      const cancelled = await tenant.call("POST", `/v1/runs/${submitted.body.run_id}/cancel`);
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe("cancelled");
      await expectUncharged(tenant, cancelled.body);
      const polled = await tenant.call("GET", `/v1/runs/${submitted.body.run_id}`);
      expect(polled.body).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });

      const again = await tenant.call("POST", `/v1/runs/${submitted.body.run_id}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body.error.type).toBe("run_not_cancellable");

      const next = await tenant.call("POST", SUBMIT, submitBody(LONG));
      expect(next.status).toBe(201);
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("a timed-out run is not charged and frees its reservation and slot", async () => {
    const short = await startTestRefvid({ REFVID_RUN_TIMEOUT_MS: "500" });
    try {
      const tenant = await short.tenant({ balanceUsd: "10.00", maxConcurrency: 1, rateLimitPerMinute: FAST });
      const submitted = await tenant.call("POST", SUBMIT, submitBody("too slow [simulate:delay=5000]"));
      expect(submitted.status).toBe(201);
      const [run] = await waitTerminal(tenant.call, [submitted.body.run_id], 5_000);
      expect(run.status).toBe("timeout");
      expect(run.error).toMatchObject({ type: "timeout" });
      await expectUncharged(tenant, run);
      const next = await tenant.call("POST", SUBMIT, submitBody("again [simulate:delay=5000]"));
      expect(next.status).toBe(201);
      const [second] = await waitTerminal(tenant.call, [next.body.run_id], 5_000);
      expect(second.status).toBe("timeout");
    } finally {
      await short.close();
      expect(short.mismatches).toEqual([]);
    }
  });
});
