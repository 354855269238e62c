/** What the admin end-to-end suites share: another key of a tenant's organization. */
import { createRefvidClient } from "@refvid/client";
import { expect } from "vitest";
import { callerFor, type Tenant, type TestRefvid } from "./harness.js";

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
    call: callerFor(t.url, apiKey),
  };
}
