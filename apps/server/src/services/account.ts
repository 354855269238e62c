/** `GET /v1/account` (interface, "Account object"). */
import type { Account } from "@refvid/api-types";
import { concurrencyRemaining, formatUsd, type RateDecision, UnauthorizedError } from "@refvid/core";
import type { OrganizationRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { budgetView } from "../views/money.js";

export function walletView(org: OrganizationRecord) {
  return {
    balance_usd: formatUsd(org.balance),
    reserved_usd: formatUsd(org.reserved),
    available_usd: formatUsd(org.balance - org.reserved),
    total_spent_usd: formatUsd(org.totalSpent),
    lifetime_top_ups_usd: formatUsd(org.lifetimeTopUps),
    currency: "usd" as const,
  };
}

export async function getAccount(deps: AppDeps, caller: Caller, rate: RateDecision): Promise<Account> {
  // Read fresh counters: the ones loaded at authentication may be a request old.
  const found = await deps.store.findApiKeyByHash(caller.apiKey.keyHash);
  if (!found) throw new UnauthorizedError("This API key was revoked.");
  const { apiKey: key, organization: org } = found;
  const now = deps.clock.now();
  const uploads = await deps.store.uploadUsage({
    organizationId: org.id,
    defaults: deps.config.uploadQuota,
    now,
  });
  if (!uploads) throw new UnauthorizedError("This API key's organization no longer exists.");
  // The organization's cap holds for each environment apart: a test key sees the test count.
  const orgInFlight = key.environment === "live" ? org.inFlight : org.testInFlight;
  const counters = {
    keyLimit: key.maxConcurrency,
    keyInFlight: key.inFlight,
    orgLimit: org.concurrencyLimit,
    orgInFlight,
  };
  return {
    organization_id: org.id,
    api_key_id: key.id,
    environment: key.environment,
    identity: { organization_name: org.name, api_key_name: key.name, api_key_prefix: key.keyPrefix },
    wallet: walletView(org),
    concurrency: {
      tier: org.tier,
      limit: org.concurrencyLimit,
      in_flight: orgInFlight,
      available: Math.max(0, org.concurrencyLimit - orgInFlight),
    },
    rate_limit: {
      per_minute: key.rateLimitPerMinute,
      remaining: rate.remaining,
      reset_seconds: Math.ceil(rate.resetMs / 1000),
    },
    api_key_concurrency: {
      limit: key.maxConcurrency,
      in_flight: key.inFlight,
      available: concurrencyRemaining(counters),
    },
    api_key_budget: budgetView(key, now),
    upload_quota: {
      bytes_limit: uploads.quota.bytes,
      bytes_used: uploads.usage.bytes,
      count_limit: uploads.quota.count,
      count_used: uploads.usage.count,
    },
  };
}
