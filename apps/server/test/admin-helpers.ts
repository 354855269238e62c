/**
 * What the admin and usage end-to-end suites share: another key of a tenant's organization, and a
 * usage row counted by hand.
 */
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

/**
 * A usage row as an organization sees it, counted by hand: runs by status (the others 0), billed
 * seconds, spend and price (the spend unless given; a test row's price is what it would have cost).
 */
export function accountUsageRow(
  group: string,
  environment: "live" | "test",
  runs: Record<string, number>,
  billed: number,
  spend: string,
  priced = spend,
) {
  const all = { queued: 0, processing: 0, succeeded: 0, failed: 0, timeout: 0, cancelled: 0, ...runs };
  return {
    group,
    environment,
    runs: { total: Object.values(all).reduce((a, b) => a + b, 0), ...all },
    failures: all.failed + all.timeout,
    billed_seconds: billed,
    spend_usd: spend,
    priced_usd: priced,
  };
}
