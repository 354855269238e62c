/**
 * Who may call the API, end to end: the API key schemes, keys that are missing, unknown or
 * revoked, and the health endpoints that need no key. Every response is also checked against
 * the OpenAPI document (`mismatches`).
 */
import { describe, expect, it } from "vitest";
import { D, expectError, keylessRequest, quickD } from "./api-fixtures.js";
import { useTestRefvid } from "./harness.js";

const t = useTestRefvid();
const raw = keylessRequest(t);

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
