/** What the admin end-to-end suites share: error checks and another key of a tenant's organization. */
import { createRefvidClient } from "@refvid/client";
import { expect } from "vitest";
import { rawRequest, type Tenant, type TestRefvid } from "./harness.js";

export type Res = { status: number; body: any };

export function expectError(res: Res, status: number, type: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({ error: { type, code: status, message: expect.any(String) } });
}

/** An `invalid_request` naming `field`, for `rule` when given. */
export function expectInvalid(res: Res, field: string, rule?: string) {
  expectError(res, 400, "invalid_request");
  expect(res.body.error.fields.map((f: { field: string }) => f.field)).toContain(field);
  if (rule) expect(res.body.error.fields).toContainEqual(expect.objectContaining({ field, rule }));
}

/** Another key of the tenant's organization, with a rate limit that polling never reaches. */
export async function keyOf(t: TestRefvid, tenant: Tenant, environment: "live" | "test"): Promise<Tenant> {
  const created = await t.admin("POST", `/admin/v1/organizations/${tenant.organizationId}/api-keys`, {
    environment,
    rate_limit_per_minute: 100_000,
  });
  expect(created.status).toBe(201);
  const apiKey = created.body.key as string;
  return {
    organizationId: tenant.organizationId,
    apiKeyId: created.body.api_key_id,
    apiKey,
    client: createRefvidClient({ baseUrl: t.url, apiKey, retry: { maxRetries: 0 } }),
    call: (method, path, body, headers = {}) =>
      rawRequest(t.url, method, path, { body, headers: { authorization: `Key ${apiKey}`, ...headers } }),
  };
}
