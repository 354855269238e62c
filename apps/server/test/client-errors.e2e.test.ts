/**
 * The client's typed errors for each limit, against the real server: ConcurrencyLimitError (key
 * and organization), RateLimitError and InsufficientBalanceError.
 */
import { ConcurrencyLimitError, InsufficientBalanceError, RateLimitError } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { useTestRefvid } from "./harness.js";
import { cancelInFlight, FAST, input, keyAdder, LONG, MODEL_D } from "./limit-helpers.js";

const t = useTestRefvid();
const addKey = keyAdder(t);

describe("the client's typed errors", () => {
  it("ConcurrencyLimitError carries scope, limit, in-flight count and Retry-After", async () => {
    const tenant = await t.tenant({ maxConcurrency: 1, rateLimitPerMinute: FAST });
    try {
      await tenant.client.submit(MODEL_D, input(LONG));
      const err = await tenant.client.submit(MODEL_D, input(LONG)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConcurrencyLimitError);
      const limit = err as ConcurrencyLimitError;
      expect(limit.status).toBe(429);
      expect(limit.type).toBe("concurrency_limit_exceeded");
      expect(limit.scope).toBe("api_key");
      expect(limit.limit).toBe(1);
      expect(limit.inFlight).toBe(1);
      expect(limit.retryAfterSeconds).toBeGreaterThanOrEqual(1);

      // The organization's cap, met through a second key that has room of its own.
      const full = await t.tenant({ maxConcurrency: 10, rateLimitPerMinute: FAST });
      try {
        const started = await Promise.all(
          Array.from({ length: 10 }, (_, i) => full.client.submit(MODEL_D, input(`${LONG} org #${i}`))),
        );
        expect(started).toHaveLength(10);
        const other = await addKey(full.organizationId, { max_concurrency: 5, rate_limit_per_minute: FAST });
        const orgErr = await other.client.submit(MODEL_D, input(LONG)).catch((e: unknown) => e);
        expect(orgErr).toBeInstanceOf(ConcurrencyLimitError);
        expect(orgErr).toMatchObject({ scope: "organization", limit: 10, inFlight: 10 });
        expect((orgErr as ConcurrencyLimitError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
      } finally {
        await cancelInFlight(full.call);
      }
    } finally {
      await cancelInFlight(tenant.call);
    }
  });

  it("RateLimitError on a key over its rate limit", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: 1 });
    await tenant.client.getAccount();
    const err = await tenant.client.submit(MODEL_D, input("too many")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitError);
    const limited = err as RateLimitError;
    expect(limited.status).toBe(429);
    expect(limited.type).toBe("rate_limit_exceeded");
    expect(limited.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(limited.retryAfterSeconds).toBeLessThanOrEqual(60);
  });

  it("InsufficientBalanceError names the required and available amounts", async () => {
    const tenant = await t.tenant({ balanceUsd: "0.10", rateLimitPerMinute: FAST });
    const err = await tenant.client.submit(MODEL_D, input("too expensive")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientBalanceError);
    const poor = err as InsufficientBalanceError;
    expect(poor.status).toBe(400);
    expect(poor.type).toBe("insufficient_balance");
    expect(poor.requiredUsd).toBe("0.284");
    expect(poor.availableUsd).toBe("0.10");
  });
});
