/**
 * The admin API: organizations and keys (their lists are in admin-lists.ts; money in
 * admin-money.ts). Each change is recorded in the audit log with the admin token's name, once made.
 */
import { createHash } from "node:crypto";
import type { components } from "@refvid/api-types";
import {
  DEFAULT_KEY_MAX_CONCURRENCY,
  DEFAULT_KEY_RATE_LIMIT_PER_MINUTE,
  formatUsd,
  InvalidRequestError,
  type KeyBudget,
  NotFoundError,
  parseUsd,
  quotaInForce,
  type UploadQuota,
} from "@refvid/core";
import type { Actor, ApiKeyRecord, OrganizationRecord, TopUpRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { newApiKeyId, newApiKeySecret, newOrganizationId, newWebhookSecret } from "../ids.js";
import { budgetView } from "../views/money.js";
import { walletView } from "./account.js";
import { alertPatch, alertSettingsView } from "./alert-settings.js";

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
    alerts: alertSettingsView(org),
    created_at: org.createdAt.toISOString(),
  };
}

export function apiKeyView(key: ApiKeyRecord, now: Date): Schemas["ApiKey"] {
  return {
    api_key_id: key.id,
    organization_id: key.organizationId,
    name: key.name,
    environment: key.environment,
    key_prefix: key.keyPrefix,
    max_concurrency: key.maxConcurrency,
    rate_limit_per_minute: key.rateLimitPerMinute,
    priority: key.priority,
    budget: budgetView(key, now),
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
    actor: topUp.actor,
    reversed_at: topUp.reversedAt ? topUp.reversedAt.toISOString() : null,
    created_at: topUp.createdAt.toISOString(),
  };
}

export const orgNotFound = (id: string) =>
  new NotFoundError("organization_not_found", `No organization ${id}.`);
export const keyNotFound = (id: string) => new NotFoundError("api_key_not_found", `No API key ${id}.`);

/** Records an admin change in the audit log, once it is made. */
export async function audit(
  deps: AppDeps,
  actor: Actor,
  change: { action: string; organizationId: string | null; targetId: string | null; detail: object },
): Promise<void> {
  await deps.store.recordAudit({
    actor: actor.name,
    requestId: actor.requestId,
    createdAt: deps.clock.now(),
    ...change,
    detail: { ...change.detail },
  });
}

export async function createOrganization(
  deps: AppDeps,
  actor: Actor,
  body: Schemas["CreateOrganizationRequest"],
) {
  const org = await deps.store.createOrganization({
    id: newOrganizationId(),
    name: body.name,
    webhookSecrets: { live: newWebhookSecret(), test: newWebhookSecret() },
    now: deps.clock.now(),
  });
  await audit(deps, actor, {
    action: "organization.create",
    organizationId: org.id,
    targetId: org.id,
    detail: body,
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
  actor: Actor,
  id: string,
  body: Schemas["UpdateOrganizationRequest"],
) {
  const org = await deps.store.updateOrganization(id, {
    ...(body.upload_quota ? { uploadQuota: body.upload_quota } : {}),
    ...(body.queue_weight !== undefined ? { queueWeight: body.queue_weight } : {}),
    ...(body.alerts ? alertPatch(deps, body.alerts, "body.alerts") : {}),
  });
  if (!org) throw orgNotFound(id);
  await audit(deps, actor, { action: "organization.update", organizationId: id, targetId: id, detail: body });
  return organizationView(org, deps.config.uploadQuota);
}

/** A budget as the admin API takes it: null removes one, undefined leaves it as it is. */
function budgetOf(body: { budget?: Schemas["KeyBudget"] | null }): KeyBudget | null | undefined {
  if (body.budget === undefined || body.budget === null) return body.budget;
  const amount = parseUsd(body.budget.amount_usd);
  if (amount === null || amount < 0) {
    throw new InvalidRequestError([
      {
        field: "body.budget.amount_usd",
        message: "must be an amount in USD with up to 6 decimals",
        rule: "amount",
      },
    ]);
  }
  return { amount, period: body.budget.period };
}

export async function createApiKey(
  deps: AppDeps,
  actor: Actor,
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
    budget: budgetOf(body) ?? null,
    now: deps.clock.now(),
  });
  if (!key) throw orgNotFound(organizationId);
  await audit(deps, actor, { action: "api_key.create", organizationId, targetId: key.id, detail: body });
  return { ...apiKeyView(key, deps.clock.now()), key: secret };
}

export async function updateApiKey(
  deps: AppDeps,
  actor: Actor,
  id: string,
  body: Schemas["UpdateApiKeyRequest"],
) {
  const budget = budgetOf(body);
  const key = await deps.store.updateApiKey(id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.max_concurrency !== undefined ? { maxConcurrency: body.max_concurrency } : {}),
    ...(body.rate_limit_per_minute !== undefined ? { rateLimitPerMinute: body.rate_limit_per_minute } : {}),
    ...(body.priority !== undefined ? { priority: body.priority } : {}),
    ...(budget !== undefined ? { budget } : {}),
  });
  if (!key) throw keyNotFound(id);
  deps.keys.forget(id);
  const organizationId = key.organizationId;
  await audit(deps, actor, { action: "api_key.update", organizationId, targetId: id, detail: body });
  return apiKeyView(key, deps.clock.now());
}

export async function revokeApiKey(deps: AppDeps, actor: Actor, id: string) {
  const key = await deps.store.revokeApiKey(id, deps.clock.now());
  if (!key) throw keyNotFound(id);
  deps.keys.forget(id);
  const organizationId = key.organizationId;
  await audit(deps, actor, { action: "api_key.revoke", organizationId, targetId: id, detail: {} });
  return apiKeyView(key, deps.clock.now());
}
