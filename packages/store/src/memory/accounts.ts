/**
 * MemoryStore's organizations, API keys and top-ups: the records, the key-hash lookup and the
 * newest-first admin lists. Methods are bound, so MemoryStore hands them out as its own.
 */
import { DEFAULT_QUEUE_WEIGHT, decideTopUp, tierFor } from "@refvid/core";
import type * as T from "../types.js";
import type { ApiKeyRecord, OrganizationRecord } from "../types.js";
import { AccountIndex } from "./account-index.js";
import { copy } from "./copy.js";

export class MemoryAccounts {
  readonly organizations = new Map<string, OrganizationRecord>();
  readonly apiKeys = new Map<string, ApiKeyRecord>();
  private readonly keysByHash = new Map<string, string>();
  /** Organizations, keys and top-ups newest first, for the admin lists. */
  readonly index = new AccountIndex();

  readonly createOrganization = async (input: Parameters<T.Store["createOrganization"]>[0]) => {
    const { tier, concurrency } = tierFor(0);
    const org: OrganizationRecord = {
      id: input.id,
      name: input.name,
      createdAt: input.now,
      balance: 0,
      reserved: 0,
      totalSpent: 0,
      lifetimeTopUps: 0,
      tier,
      concurrencyLimit: concurrency,
      inFlight: 0,
      testInFlight: 0,
      webhookSecrets: {
        live: { secret: input.webhookSecrets.live, previous: null },
        test: { secret: input.webhookSecrets.test, previous: null },
      },
      uploadQuota: { bytes: null, count: null },
      queueWeight: DEFAULT_QUEUE_WEIGHT,
    };
    this.organizations.set(org.id, org);
    this.index.addOrganization(org);
    return copy(org);
  };

  readonly getOrganization = async (id: string) => {
    const org = this.organizations.get(id);
    return org ? copy(org) : null;
  };

  readonly updateOrganization = async (id: string, patch: T.OrganizationPatch) => {
    const org = this.organizations.get(id);
    if (!org) return null;
    org.uploadQuota = { ...org.uploadQuota, ...patch.uploadQuota };
    if (patch.queueWeight !== undefined) org.queueWeight = patch.queueWeight;
    return copy(org);
  };

  readonly createApiKey = async (input: Parameters<T.Store["createApiKey"]>[0]) => {
    if (!this.organizations.has(input.organizationId)) return null;
    const { now, ...rest } = input;
    const key: ApiKeyRecord = {
      ...rest,
      priority: rest.priority ?? "normal",
      inFlight: 0,
      createdAt: now,
      revokedAt: null,
    };
    this.apiKeys.set(key.id, key);
    this.keysByHash.set(key.keyHash, key.id);
    this.index.addApiKey(key);
    return copy(key);
  };

  readonly getApiKey = async (id: string) => {
    const key = this.apiKeys.get(id);
    return key ? copy(key) : null;
  };

  readonly updateApiKey = async (id: string, patch: T.ApiKeyPatch) => {
    const key = this.apiKeys.get(id);
    if (!key) return null;
    if (patch.name !== undefined) key.name = patch.name;
    if (patch.maxConcurrency !== undefined) key.maxConcurrency = patch.maxConcurrency;
    if (patch.rateLimitPerMinute !== undefined) key.rateLimitPerMinute = patch.rateLimitPerMinute;
    if (patch.priority !== undefined) key.priority = patch.priority;
    return copy(key);
  };

  readonly revokeApiKey = async (id: string, now: Date) => {
    const key = this.apiKeys.get(id);
    if (!key) return null;
    key.revokedAt ??= now;
    return copy(key);
  };

  readonly addTopUp = async (input: Parameters<T.Store["addTopUp"]>[0]) => {
    const org = this.organizations.get(input.organizationId);
    if (!org) return null;
    const decision = decideTopUp(org.lifetimeTopUps, input.amount);
    if (!decision.ok) return { kind: "rejected", decision } as const;
    org.balance += input.amount;
    org.lifetimeTopUps = decision.lifetimeTopUps;
    org.tier = decision.tier;
    org.concurrencyLimit = decision.concurrency;
    const topUp = {
      id: input.id,
      organizationId: org.id,
      amount: input.amount,
      note: input.note,
      createdAt: input.now,
    };
    this.index.addTopUp(topUp);
    return { kind: "added", topUp: copy(topUp), organization: copy(org) } as const;
  };

  readonly findApiKeyByHash = async (keyHash: string) => {
    const id = this.keysByHash.get(keyHash);
    const apiKey = id ? this.apiKeys.get(id) : undefined;
    const organization = apiKey ? this.organizations.get(apiKey.organizationId) : undefined;
    return apiKey && organization ? { apiKey: copy(apiKey), organization: copy(organization) } : null;
  };

  readonly rotateWebhookSecret = async ({
    organizationId,
    environment,
    secret,
    previousExpiresAt,
  }: Parameters<T.Store["rotateWebhookSecret"]>[0]) => {
    const org = this.organizations.get(organizationId);
    if (!org) return null;
    const replaced = org.webhookSecrets[environment].secret;
    org.webhookSecrets[environment] = {
      secret,
      previous: { secret: replaced, expiresAt: previousExpiresAt },
    };
    return copy(org);
  };
}
