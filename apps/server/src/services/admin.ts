/** The admin API: organizations, keys and top-ups (their lists are in admin-lists.ts). */
import { createHash } from "node:crypto";
import type { components } from "@refvid/api-types";
import {
  DEFAULT_KEY_MAX_CONCURRENCY,
  DEFAULT_KEY_RATE_LIMIT_PER_MINUTE,
  formatUsd,
  InvalidRequestError,
  MAX_TOP_UP,
  NotFoundError,
  parseUsd,
  quotaInForce,
  type UploadQuota,
} from "@refvid/core";
import type { ApiKeyRecord, OrganizationRecord, TopUpRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { newApiKeyId, newApiKeySecret, newOrganizationId, newTopUpId, newWebhookSecret } from "../ids.js";
import { walletView } from "./account.js";

type Schemas = components["schemas"];

export const hashApiKey = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** `quotaDefaults` are the operator's upload quota, which the organization has unless it has its own. */
export function organizationView(
  org: OrganizationRecord,
  quotaDefaults: UploadQuota,
): Schemas["Organization"] {
  return {
    organization_id: org.id,
    name: org.name,
    tier: org.tier,
    concurrency_limit: org.concurrencyLimit,
    wallet: walletView(org),
    upload_quota: quotaInForce(org.uploadQuota, quotaDefaults),
    queue_weight: org.queueWeight,
    created_at: org.createdAt.toISOString(),
  };
}

export function apiKeyView(key: ApiKeyRecord): Schemas["ApiKey"] {
  return {
    api_key_id: key.id,
    organization_id: key.organizationId,
    name: key.name,
    environment: key.environment,
    key_prefix: key.keyPrefix,
    max_concurrency: key.maxConcurrency,
    rate_limit_per_minute: key.rateLimitPerMinute,
    priority: key.priority,
    created_at: key.createdAt.toISOString(),
    revoked_at: key.revokedAt ? key.revokedAt.toISOString() : null,
  };
}

export function topUpView(topUp: TopUpRecord): Schemas["TopUpEntry"] {
  return {
    top_up_id: topUp.id,
    organization_id: topUp.organizationId,
    amount_usd: formatUsd(topUp.amount),
    note: topUp.note,
    created_at: topUp.createdAt.toISOString(),
  };
}

export const orgNotFound = (id: string) =>
  new NotFoundError("organization_not_found", `No organization ${id}.`);
export const keyNotFound = (id: string) => new NotFoundError("api_key_not_found", `No API key ${id}.`);

export async function createOrganization(deps: AppDeps, body: Schemas["CreateOrganizationRequest"]) {
  const org = await deps.store.createOrganization({
    id: newOrganizationId(),
    name: body.name,
    webhookSecrets: { live: newWebhookSecret(), test: newWebhookSecret() },
    now: deps.clock.now(),
  });
  return organizationView(org, deps.config.uploadQuota);
}

export async function getOrganization(deps: AppDeps, id: string) {
  const org = await deps.store.getOrganization(id);
  if (!org) throw orgNotFound(id);
  return organizationView(org, deps.config.uploadQuota);
}

/** `PATCH /admin/v1/organizations/{id}`: its own upload quota, part by part (null: the default). */
export async function updateOrganization(
  deps: AppDeps,
  id: string,
  body: Schemas["UpdateOrganizationRequest"],
) {
  const org = await deps.store.updateOrganization(id, {
    ...(body.upload_quota ? { uploadQuota: body.upload_quota } : {}),
    ...(body.queue_weight !== undefined ? { queueWeight: body.queue_weight } : {}),
  });
  if (!org) throw orgNotFound(id);
  return organizationView(org, deps.config.uploadQuota);
}

export async function createApiKey(
  deps: AppDeps,
  organizationId: string,
  body: Schemas["CreateApiKeyRequest"],
) {
  const environment = body.environment ?? "live";
  const secret = newApiKeySecret(environment);
  const key = await deps.store.createApiKey({
    id: newApiKeyId(),
    organizationId,
    name: body.name ?? null,
    environment,
    keyHash: hashApiKey(secret),
    keyPrefix: secret.slice(0, 12),
    maxConcurrency: body.max_concurrency ?? DEFAULT_KEY_MAX_CONCURRENCY,
    rateLimitPerMinute: body.rate_limit_per_minute ?? DEFAULT_KEY_RATE_LIMIT_PER_MINUTE,
    priority: body.priority ?? "normal",
    now: deps.clock.now(),
  });
  if (!key) throw orgNotFound(organizationId);
  return { ...apiKeyView(key), key: secret };
}

export async function updateApiKey(deps: AppDeps, id: string, body: Schemas["UpdateApiKeyRequest"]) {
  const key = await deps.store.updateApiKey(id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.max_concurrency !== undefined ? { maxConcurrency: body.max_concurrency } : {}),
    ...(body.rate_limit_per_minute !== undefined ? { rateLimitPerMinute: body.rate_limit_per_minute } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
  });
  if (!key) throw keyNotFound(id);
  deps.keys.forget(id);
  return apiKeyView(key);
}

export async function revokeApiKey(deps: AppDeps, id: string) {
  const key = await deps.store.revokeApiKey(id, deps.clock.now());
  if (!key) throw keyNotFound(id);
  deps.keys.forget(id);
  return apiKeyView(key);
}

export async function createTopUp(
  deps: AppDeps,
  organizationId: string,
  body: Schemas["CreateTopUpRequest"],
) {
  const amount = parseUsd(body.amount_usd);
  if (amount === null || amount <= 0 || amount > MAX_TOP_UP) {
    throw new InvalidRequestError([
      {
        field: "body.amount_usd",
        message: "must be a positive amount of at most 1000000000 USD with up to 6 decimals",
        rule: "amount",
      },
    ]);
  }
  // The lifetime cap is checked by the store under the organization's row lock, so racing
  // top-ups cannot pass it together.
  const result = await deps.store.addTopUp({
    id: newTopUpId(),
    organizationId,
    amount,
    note: body.note ?? null,
    now: deps.clock.now(),
  });
  if (!result) throw orgNotFound(organizationId);
  if (result.kind === "rejected") {
    throw new InvalidRequestError([
      {
        field: "body.amount_usd",
        message: `would take the organization's lifetime top-ups past ${formatUsd(result.decision.max)} USD (now ${formatUsd(result.decision.lifetimeTopUps)})`,
        rule: "amount",
      },
    ]);
  }
  return {
    ...topUpView(result.topUp),
    organization: organizationView(result.organization, deps.config.uploadQuota),
  };
}
