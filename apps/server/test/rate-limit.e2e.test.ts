/**
 * The per-key rate limit (interface, "Limits") against the real server: its headers on every
 * answer, the 429 on any endpoint once spent, and another key's own allowance.
 */
import { describe, expect, it } from "vitest";
import { type RawResponse, useTestRefvid } from "./harness.js";
import { input, keyAdder, MODEL_D, SUBMIT, submitBody } from "./limit-helpers.js";

const t = useTestRefvid();
const addKey = keyAdder(t);

describe("rate limit", () => {
  it("allows rate_limit_per_minute requests, then answers 429 on any endpoint, per key", async () => {
    const tenant = await t.tenant({ rateLimitPerMinute: 5 });
    const requests: (() => Promise<RawResponse>)[] = [
      () => tenant.call("GET", "/v1/account"),
      () => tenant.call("POST", "/v1/pricing/preview", { endpoint: MODEL_D, input: input("price") }),
      () => tenant.call("POST", "/v1/runs/search", {}),
      () => tenant.call("POST", SUBMIT, submitBody("rate limited [simulate:delay=50]")),
      () => tenant.call("GET", "/v1/account"),
    ];
    const resets: number[] = [];
    for (const [i, request] of requests.entries()) {
      const res = await request();
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get("ratelimit-policy")).toBe('"per-key";q=5;w=60');
      const match = /^"per-key";r=(\d+);t=(\d+)$/.exec(res.headers.get("ratelimit") ?? "");
      expect(match, `RateLimit header of request ${i + 1}`).not.toBeNull();
      expect(Number(match?.[1])).toBe(4 - i);
      const reset = Number(match?.[2]);
      expect(reset).toBeGreaterThanOrEqual(1);
      expect(reset).toBeLessThanOrEqual(60);
      resets.push(reset);
    }
    // One fixed window: the reset never moves later.
    for (let i = 1; i < resets.length; i++) expect(resets[i]).toBeLessThanOrEqual(resets[i - 1] as number);

    const sixth = await tenant.call("GET", "/v1/account");
    expect(sixth.status).toBe(429);
    expect(sixth.body).toStrictEqual({
      error: "rate_limit_exceeded",
      message: expect.any(String),
      request_id: sixth.headers.get("x-request-id"),
    });
    const retryAfter = sixth.headers.get("retry-after") ?? "";
    expect(retryAfter).toMatch(/^[1-9]\d*$/);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    expect(sixth.headers.get("ratelimit")).toMatch(/^"per-key";r=0;t=\d+$/);

    // A submit is refused by the rate limit too, before any admission.
    const submit = await tenant.call("POST", SUBMIT, submitBody("over the limit"));
    expect(submit.status).toBe(429);
    expect(submit.body).toStrictEqual({
      error: "rate_limit_exceeded",
      message: expect.any(String),
      request_id: submit.headers.get("x-request-id"),
    });

    // Another key of the same organization has its own allowance.
    const other = await addKey(tenant.organizationId);
    const fresh = await other.call("GET", "/v1/account");
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("ratelimit-policy")).toBe('"per-key";q=120;w=60');
    expect(fresh.headers.get("ratelimit")).toMatch(/^"per-key";r=119;t=\d+$/);
  });
});
