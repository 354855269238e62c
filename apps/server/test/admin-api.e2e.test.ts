/**
 * The admin API end to end: organizations, API keys (created, patched, revoked), top-ups up to
 * the lifetime cap, the admin token, and a server without one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningRefvid } from "../src/runtime.js";
import { BUSY, D, expectError, expectInvalid, keylessRequest, quickD, slow } from "./api-fixtures.js";
import { startOwnRefvid, useTestRefvid } from "./harness.js";

const t = useTestRefvid();
const raw = keylessRequest(t);

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
        request_id: second.headers.get("x-request-id"),
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
