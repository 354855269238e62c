/**
 * The concurrency caps (interface, "Limits") against the real server: the organization's tier cap
 * across two keys under parallel load, and a key's own cap while the organization has headroom.
 */
import { describe, expect, it } from "vitest";
import { useTestRefvid } from "./harness.js";
import {
  account,
  cancelInFlight,
  expectConcurrency429,
  FAST,
  type Key,
  keyAdder,
  LONG,
  SUBMIT,
  submitBody,
  waitTerminal,
} from "./limit-helpers.js";

const t = useTestRefvid();
const addKey = keyAdder(t);

describe("organization concurrency cap", () => {
  it("admits exactly the tier cap across two keys under parallel load, and frees slots on cancel", async () => {
    const a = await t.tenant({ maxConcurrency: 10, rateLimitPerMinute: FAST, balanceUsd: "100.00" });
    const keyA: Key = a;
    const keyB = await addKey(a.organizationId, { max_concurrency: 10, rate_limit_per_minute: FAST });
    const keys = [keyA, keyB];
    try {
      const before = await account(keyA.call);
      expect(before.concurrency).toEqual({ tier: "starter", limit: 10, in_flight: 0, available: 10 });

      const responses = await Promise.all(
        Array.from({ length: 30 }, (_, i) => {
          const key = keys[i % 2] as Key;
          return key.call("POST", SUBMIT, submitBody(`${LONG} #${i}`)).then((res) => ({ res, key }));
        }),
      );
      const admitted = responses.filter(({ res }) => res.status === 201);
      const rejected = responses.filter(({ res }) => res.status !== 201);
      expect(admitted).toHaveLength(10);
      expect(rejected).toHaveLength(20);

      for (const { res, key } of rejected) {
        // A key that holds all ten slots itself is told about its own cap first (key cap checked
        // first); otherwise the organization is the limit.
        const byThisKey = admitted.filter((x) => x.key === key).length;
        if (byThisKey === 10) expectConcurrency429(res, "api_key", 10, 10);
        else expectConcurrency429(res, "organization", 10, 10);
      }

      // Each admission took one organization slot and nothing ended meanwhile, so the admitted
      // responses announce 9, 8, …, 0 remaining, each value once.
      const remaining = admitted.map(({ res }) => Number(res.headers.get("x-concurrency-remaining")));
      expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      for (const { res } of admitted) {
        expect(res.body.status).toBe("queued");
        expect(res.headers.get("x-run-id")).toBe(res.body.run_id);
      }

      const full = await account(keyA.call);
      expect(full.concurrency).toEqual({ tier: "starter", limit: 10, in_flight: 10, available: 0 });
      const perKey = await Promise.all(keys.map(async (k) => (await account(k.call)).api_key_concurrency));
      expect(perKey.reduce((sum, c) => sum + c.in_flight, 0)).toBe(10);
      for (const c of perKey) expect(c.available).toBe(0);
      // 10 runs of 0.284 reserved.
      expect(full.wallet).toMatchObject({
        balance_usd: "100.00",
        reserved_usd: "2.84",
        available_usd: "97.16",
      });

      // Cancel three: exactly three new submits get in.
      const toCancel = admitted.slice(0, 3);
      for (const { res, key } of toCancel) {
        const cancelled = await key.call("POST", `/v1/runs/${res.body.run_id}/cancel`);
        expect(cancelled.status).toBe(200);
        expect(cancelled.body.status).toBe("cancelled");
      }
      expect((await account(keyA.call)).concurrency).toMatchObject({ in_flight: 7, available: 3 });

      const again = await Promise.all(
        Array.from({ length: 8 }, (_, i) => {
          const key = keys[i % 2] as Key;
          return key.call("POST", SUBMIT, submitBody(`${LONG} again #${i}`));
        }),
      );
      expect(again.filter((res) => res.status === 201)).toHaveLength(3);
      const againRejected = again.filter((res) => res.status !== 201);
      expect(againRejected).toHaveLength(5);
      for (const res of againRejected) expect(res.body.error.code).toBe("concurrency_limit_exceeded");
      expect((await account(keyA.call)).concurrency).toMatchObject({ in_flight: 10, available: 0 });
    } finally {
      await cancelInFlight(keyA.call);
    }
  });
});

describe("API key concurrency cap", () => {
  it("holds a key to its own cap while the organization has headroom, and frees slots as runs end", async () => {
    const tenant = await t.tenant({ maxConcurrency: 3, rateLimitPerMinute: FAST });
    const short = "a short run [simulate:delay=300]";
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => tenant.call("POST", SUBMIT, submitBody(`${short} #${i}`))),
    );
    const admitted = responses.filter((res) => res.status === 201);
    expect(admitted).toHaveLength(3);
    for (const res of responses.filter((r) => r.status !== 201)) expectConcurrency429(res, "api_key", 3, 3);
    expect(
      admitted.map((res) => Number(res.headers.get("x-concurrency-remaining"))).sort((x, y) => x - y),
    ).toEqual([0, 1, 2]);

    const mid = await account(tenant.call);
    expect(mid.api_key_concurrency).toEqual({ limit: 3, in_flight: 3, available: 0 });
    expect(mid.concurrency).toMatchObject({ limit: 10, in_flight: 3, available: 7 });

    // No cancel: the runs end by themselves and give their slots back.
    const ended = await waitTerminal(
      tenant.call,
      admitted.map((res) => res.body.run_id),
    );
    for (const run of ended) expect(run.status).toBe("succeeded");
    const after = await account(tenant.call);
    expect(after.api_key_concurrency).toEqual({ limit: 3, in_flight: 0, available: 3 });

    const next = await Promise.all(
      Array.from({ length: 3 }, (_, i) => tenant.call("POST", SUBMIT, submitBody(`${short} next #${i}`))),
    );
    for (const res of next) expect(res.status).toBe(201);
    await waitTerminal(
      tenant.call,
      next.map((res) => res.body.run_id),
    );
  });
});
