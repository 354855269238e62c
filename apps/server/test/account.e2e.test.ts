/**
 * The account and the webhook secret end to end: every field of the account, the tier a
 * top-up moves to, a test key's environment, and one stable secret per organization.
 */
import { describe, expect, it } from "vitest";
import { useTestRefvid } from "./harness.js";

const t = useTestRefvid();

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

  it("the webhook secret is whsec_…, stable across calls, one per organization and environment", async () => {
    const tenant = await t.tenant();
    const first = await tenant.client.getWebhookSecret();
    expect(first.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/);
    // The live key's; a test key reads its own (webhook-secret-environments.e2e.test.ts).
    expect(first.environment).toBe("live");
    const second = await tenant.call("GET", "/v1/webhooks/secret");
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first);
    const other = await t.tenant();
    expect((await other.client.getWebhookSecret()).secret).not.toBe(first.secret);
  });
});
