/**
 * MemoryStore's organizations, API keys and top-ups: the records, the key-hash lookup and the
 * newest-first admin lists. Methods are bound, so MemoryStore hands them out as its own.
 */
import { DEFAULT_QUEUE_WEIGHT, decideCorrection, decideTopUp, NO_SPEND, tierFor } from "@refvid/core";
import { type NewAlertDelivery, rearmWallet, walletAlerts } from "../alert-deliveries.js";
import { adjustmentAudit, reversalAudit, topUpAudit } from "../ledger-types.js";
import type * as T from "../types.js";
import type { ApiKeyRecord, OrganizationRecord, TopUpRecord } from "../types.js";
import { AccountIndex } from "./account-index.js";
import { copy } from "./copy.js";
import { MemoryLedger } from "./ledger.js";

export class MemoryAccounts {
  readonly organizations = new Map<string, OrganizationRecord>();
  readonly apiKeys = new Map<string, ApiKeyRecord>();
  private readonly keysByHash = new Map<string, string>();
  /** Organizations, keys and top-ups newest first, for the admin lists. */
  readonly index = new AccountIndex();
  /** Every change of a wallet, and the audit log. */
  readonly ledger = new MemoryLedger();
  private readonly topUps = new Map<string, TopUpRecord>();
  /** Top-ups by organization and Idempotency-Key. */
  private readonly topUpKeys = new Map<string, TopUpRecord>();

  /** `alert` queues the deliveries of the spend alerts a correction raises. */
  constructor(private readonly alert: (deliveries: NewAlertDelivery[]) => void) {}

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
      alerts: { webhookUrl: null, thresholds: null, lastTopUp: 0, fired: [] },
      videoWebhookUrl: null,
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
    if (patch.alertWebhookUrl !== undefined) org.alerts.webhookUrl = patch.alertWebhookUrl;
    if (patch.balanceAlertThresholds !== undefined) org.alerts.thresholds = patch.balanceAlertThresholds;
    if (patch.videoWebhookUrl !== undefined) org.videoWebhookUrl = patch.videoWebhookUrl;
    return copy(org);
  };

  readonly createApiKey = async (input: Parameters<T.Store["createApiKey"]>[0]) => {
    if (!this.organizations.has(input.organizationId)) return null;
    const { now, ...rest } = input;
    const key: ApiKeyRecord = {
      ...rest,
      priority: rest.priority ?? "normal",
      budget: rest.budget ?? null,
      spend: copy(NO_SPEND),
      budgetAlert: { level: 0, periodStart: null },
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
    if (patch.budget !== undefined) {
      key.budget = patch.budget;
      // A new budget arms its alerts again.
      key.budgetAlert = { level: 0, periodStart: null };
    }
    return copy(key);
  };

  readonly revokeApiKey = async (id: string, now: Date) => {
    const key = this.apiKeys.get(id);
    if (!key) return null;
    key.revokedAt ??= now;
    return copy(key);
  };

  readonly addTopUp = async (input: T.TopUpInput): Promise<T.TopUpResult | null> => {
    const org = this.organizations.get(input.organizationId);
    if (!org) return null;
    const keyed = input.idempotencyKey === undefined ? undefined : `${org.id}\u0000${input.idempotencyKey}`;
    const earlier = keyed === undefined ? undefined : this.topUpKeys.get(keyed);
    if (earlier) {
      return earlier.amount === input.amount && earlier.note === input.note
        ? { kind: "replayed", topUp: copy(earlier), organization: copy(org) }
        : { kind: "mismatch", topUp: copy(earlier) };
    }
    const decision = decideTopUp(org.lifetimeTopUps, input.amount);
    if (!decision.ok) return { kind: "rejected", decision };
    org.balance += input.amount;
    org.lifetimeTopUps = decision.lifetimeTopUps;
    org.tier = decision.tier;
    org.concurrencyLimit = decision.concurrency;
    org.alerts.lastTopUp = input.amount;
    rearmWallet(org);
    const topUp: TopUpRecord = {
      id: input.id,
      organizationId: org.id,
      amount: input.amount,
      note: input.note,
      createdAt: input.now,
      actor: input.actor?.name ?? null,
      reversedAt: null,
    };
    this.index.addTopUp(topUp);
    this.topUps.set(topUp.id, topUp);
    if (keyed !== undefined) this.topUpKeys.set(keyed, topUp);
    const links = { topUpId: topUp.id, actor: topUp.actor };
    this.ledger.add(org, "top_up", input.amount, links, input.now);
    if (input.actor) {
      this.ledger.addAudit(topUpAudit({ ...input, actor: input.actor }));
    }
    return { kind: "added", topUp: copy(topUp), organization: copy(org) };
  };

  readonly reverseTopUp: T.Store["reverseTopUp"] = async (input) => {
    const org = this.organizations.get(input.organizationId);
    const topUp = this.topUps.get(input.topUpId);
    if (!org || topUp?.organizationId !== org.id) return null;
    const reversal = this.ledger.reversalOf(org.id, topUp.id);
    if (reversal) {
      return {
        kind: "rejected",
        decision: { ok: false, reason: "already_reversed", reversalId: reversal.id },
      };
    }
    const decision = decideCorrection(org, -topUp.amount);
    if (!decision.ok) return { kind: "rejected", decision };
    org.balance -= topUp.amount;
    org.lifetimeTopUps = Math.max(0, org.lifetimeTopUps - topUp.amount);
    const { tier, concurrency } = tierFor(org.lifetimeTopUps);
    org.tier = tier;
    org.concurrencyLimit = concurrency;
    topUp.reversedAt = input.now;
    this.alert(walletAlerts(org, org.balance - org.reserved + topUp.amount, input.now));
    const links = { topUpId: topUp.id, reason: input.reason, actor: input.actor.name };
    const entry = this.ledger.add(org, "reversal", -topUp.amount, links, input.now);
    this.ledger.addAudit(reversalAudit(input, topUp, entry.id));
    return { kind: "made", entry, organization: copy(org) };
  };

  readonly adjustBalance: T.Store["adjustBalance"] = async (input) => {
    const org = this.organizations.get(input.organizationId);
    if (!org) return null;
    const decision = decideCorrection(org, input.amount);
    if (!decision.ok) return { kind: "rejected", decision };
    org.balance += input.amount;
    if (input.amount > 0) rearmWallet(org);
    else this.alert(walletAlerts(org, org.balance - org.reserved - input.amount, input.now));
    const links = { reason: input.reason, actor: input.actor.name };
    const entry = this.ledger.add(org, "adjustment", input.amount, links, input.now);
    this.ledger.addAudit(adjustmentAudit(input, entry.id));
    return { kind: "made", entry, organization: copy(org) };
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
