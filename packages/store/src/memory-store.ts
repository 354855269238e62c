/**
 * `MemoryStore implements Store`: all state in Maps, for tests, benchmarks and `REFVID_STORE=memory`.
 * Every method runs to completion without awaiting, so each is atomic on Node's single thread.
 * Counters (in-flight, reserved) are kept with each transition, so admission, poll and account
 * are O(1) in the number of runs ever made.
 */

import {
  admissionState,
  afterAdmission,
  concurrencyRemaining,
  countRequest,
  decideAdmission,
  decideEnd,
  decideIdempotency,
  decideTopUp,
  type IdempotencyRecord,
  isInFlight,
  type RateWindow,
  settleRun,
  tierFor,
} from "@refvid/core";
import { idempotencyAnswer } from "./admission.js";
import type * as T from "./types.js";
import type { ApiKeyRecord, OrganizationRecord, RunRecord, Store, WebhookDelivery } from "./types.js";
import { webhookIdOf } from "./webhook-id.js";

const copy = <V>(value: V): V => structuredClone(value);

export class MemoryStore implements Store {
  private readonly organizations = new Map<string, OrganizationRecord>();
  private readonly apiKeys = new Map<string, ApiKeyRecord>();
  private readonly keysByHash = new Map<string, string>();
  private readonly runs = new Map<string, RunRecord>();
  /** Queued run ids in admission order (Map keeps insertion order). */
  private readonly queue = new Map<string, true>();
  /** Per organization, run ids newest last, for search. */
  private readonly runsByOrg = new Map<string, string[]>();
  private readonly rateWindows = new Map<string, RateWindow>();
  private readonly idempotency = new Map<string, IdempotencyRecord>();
  private readonly webhooks = new Map<string, WebhookDelivery>();
  /** Runs queued or processing, so the sweeper's scans cost O(in flight), not O(history). */
  private readonly inFlight = new Map<string, RunRecord>();
  /** Deliveries still to be sent. */
  private readonly pendingWebhooks = new Map<string, WebhookDelivery>();
  private closed = false;

  async createOrganization(input: { id: string; name: string; webhookSecret: string; now: Date }) {
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
      webhookSecret: input.webhookSecret,
    };
    this.organizations.set(org.id, org);
    this.runsByOrg.set(org.id, []);
    return copy(org);
  }

  async getOrganization(id: string) {
    const org = this.organizations.get(id);
    return org ? copy(org) : null;
  }

  async createApiKey(input: Omit<ApiKeyRecord, "inFlight" | "revokedAt" | "createdAt"> & { now: Date }) {
    if (!this.organizations.has(input.organizationId)) return null;
    const { now, ...rest } = input;
    const key: ApiKeyRecord = { ...rest, inFlight: 0, createdAt: now, revokedAt: null };
    this.apiKeys.set(key.id, key);
    this.keysByHash.set(key.keyHash, key.id);
    return copy(key);
  }

  async getApiKey(id: string) {
    const key = this.apiKeys.get(id);
    return key ? copy(key) : null;
  }

  async updateApiKey(id: string, patch: T.ApiKeyPatch) {
    const key = this.apiKeys.get(id);
    if (!key) return null;
    if (patch.name !== undefined) key.name = patch.name;
    if (patch.maxConcurrency !== undefined) key.maxConcurrency = patch.maxConcurrency;
    if (patch.rateLimitPerMinute !== undefined) key.rateLimitPerMinute = patch.rateLimitPerMinute;
    return copy(key);
  }

  async revokeApiKey(id: string, now: Date) {
    const key = this.apiKeys.get(id);
    if (!key) return null;
    key.revokedAt ??= now;
    return copy(key);
  }

  async addTopUp(input: {
    id: string;
    organizationId: string;
    amount: number;
    note: string | null;
    now: Date;
  }) {
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
    return { kind: "added", topUp, organization: copy(org) } as const;
  }

  async findApiKeyByHash(keyHash: string) {
    const id = this.keysByHash.get(keyHash);
    const apiKey = id ? this.apiKeys.get(id) : undefined;
    const organization = apiKey ? this.organizations.get(apiKey.organizationId) : undefined;
    return apiKey && organization ? { apiKey: copy(apiKey), organization: copy(organization) } : null;
  }

  async countRequest(apiKeyId: string, limit: number, now: Date) {
    const decision = countRequest(this.rateWindows.get(apiKeyId), limit, now.getTime());
    this.rateWindows.set(apiKeyId, decision.window);
    return decision;
  }

  async admitRun({
    run,
    idempotency,
    now,
  }: {
    run: T.NewRun;
    idempotency?: T.IdempotencyRequest;
    now: Date;
  }) {
    const org = this.organizations.get(run.organizationId);
    const key = this.apiKeys.get(run.apiKeyId);
    if (!org || !key) return { kind: "api_key_gone" } as const;
    const idemKey = idempotency ? `${run.organizationId}\u0000${idempotency.key}` : null;
    if (idempotency && idemKey) {
      const earlier = idempotencyAnswer(
        decideIdempotency(this.idempotency.get(idemKey), idempotency.requestHash, now),
      );
      if (earlier) return earlier;
    }
    if (key.revokedAt) return { kind: "api_key_gone" } as const;
    const state = admissionState(org, key);
    const decision = decideAdmission(state, run.reserved);
    if (!decision.ok) return { kind: "rejected", decision } as const;

    org.reserved += run.reserved;
    org.inFlight += 1;
    key.inFlight += 1;
    const record: RunRecord = {
      ...run,
      status: "queued",
      charged: null,
      billableSeconds: null,
      output: null,
      error: null,
      progress: null,
      startedAt: null,
      completedAt: null,
      leaseOwner: null,
      leaseExpiresAt: null,
      attempts: 0,
      upstream: null,
      provider: null,
    };
    this.runs.set(run.id, record);
    this.queue.set(run.id, true);
    this.inFlight.set(run.id, record);
    this.insertInOrder(this.runsByOrg.get(org.id) ?? [], record);
    if (idempotency && idemKey) {
      const response = idempotency.response?.(copy(record));
      this.idempotency.set(idemKey, {
        requestHash: idempotency.requestHash,
        runId: run.id,
        expiresAt: idempotency.expiresAt,
        response: response ? copy(response) : null,
      });
    }
    const remaining = concurrencyRemaining(afterAdmission(state));
    return { kind: "admitted", run: copy(record), concurrencyRemaining: remaining } as const;
  }

  async completeIdempotency(organizationId: string, key: string, status: number, body: unknown) {
    const entry = this.idempotency.get(`${organizationId}\u0000${key}`);
    if (entry && !entry.response) entry.response = { status, body: copy(body) };
  }

  async getRun(organizationId: string, runId: string) {
    const run = this.runs.get(runId);
    return run && run.organizationId === organizationId ? copy(run) : null;
  }

  async searchRuns(search: T.RunSearch) {
    const ids = this.runsByOrg.get(search.organizationId) ?? [];
    // Each organization's list is kept in (createdAt, id) order (insertInOrder). A cursor is found
    // by binary search, so a page costs O(page + runs skipped by filters), not O(history).
    let i = search.after ? this.indexBefore(ids, search.after) : ids.length - 1;
    const found: RunRecord[] = [];
    for (; i >= 0 && found.length < search.limit; i--) {
      const run = this.runs.get(ids[i] as string);
      if (run && matches(run, search)) found.push(copy(run));
    }
    return found;
  }

  /**
   * Keeps an organization's list in (createdAt, id) order. Admission order almost always is that
   * order, so this is an append; runs admitted in the same millisecond are placed by id.
   */
  private insertInOrder(ids: string[], run: RunRecord): void {
    let at = ids.length;
    while (at > 0 && newestFirst(this.runs.get(ids[at - 1] as string) as RunRecord, run) < 0) at--;
    ids.splice(at, 0, run.id);
  }

  /** Index of the newest run in `ids` that is strictly older than `cursor` (-1 if none). */
  private indexBefore(ids: string[], cursor: { createdAt: Date; id: string }): number {
    let lo = 0;
    let hi = ids.length; // first index whose run is not older than the cursor
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const run = this.runs.get(ids[mid] as string) as RunRecord;
      if (newestFirst(run, cursor) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  async claimRuns({
    workerId,
    limit,
    leaseMs,
    now,
    skipEndpoints = [],
  }: {
    workerId: string;
    limit: number;
    leaseMs: number;
    now: Date;
    skipEndpoints?: readonly string[];
  }) {
    const claimed: RunRecord[] = [];
    for (const id of this.queue.keys()) {
      if (claimed.length >= limit) break;
      const run = this.runs.get(id);
      if (run?.status === "queued" && skipEndpoints.includes(run.endpoint)) continue;
      this.queue.delete(id);
      if (run?.status !== "queued") continue;
      run.status = "processing";
      run.startedAt ??= now;
      run.leaseOwner = workerId;
      run.leaseExpiresAt = new Date(now.getTime() + leaseMs);
      run.attempts += 1;
      claimed.push(copy(run));
    }
    return claimed;
  }

  async renewLease({
    runId,
    workerId,
    leaseMs,
    now,
  }: {
    runId: string;
    workerId: string;
    leaseMs: number;
    now: Date;
  }) {
    const run = this.runs.get(runId);
    if (run?.status !== "processing" || run.leaseOwner !== workerId) return false;
    run.leaseExpiresAt = new Date(now.getTime() + leaseMs);
    return true;
  }

  async acquireProvider({
    runId,
    workerId,
    provider,
    limit,
  }: {
    runId: string;
    workerId: string;
    provider: string;
    limit?: number;
  }) {
    const run = this.runs.get(runId);
    if (run?.status !== "processing" || run.leaseOwner !== workerId) return false;
    if (limit !== undefined) {
      let taken = 0;
      for (const other of this.inFlight.values()) {
        if (other.id !== runId && other.status === "processing" && other.provider === provider) taken++;
      }
      if (taken >= limit) return false;
    }
    run.provider = provider;
    return true;
  }

  async releaseRun({ runId, workerId }: { runId: string; workerId: string }) {
    const run = this.runs.get(runId);
    if (run?.status !== "processing" || run.leaseOwner !== workerId) return false;
    run.status = "queued";
    run.leaseOwner = null;
    run.leaseExpiresAt = null;
    run.provider = null;
    run.attempts -= 1;
    if (run.attempts === 0) run.startedAt = null;
    // Back in its place: the queue is in admission order.
    const queued = [...this.queue.keys(), run.id]
      .map((id) => this.runs.get(id) as RunRecord)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    this.queue.clear();
    for (const r of queued) this.queue.set(r.id, true);
    return true;
  }

  async recordUpstream({
    runId,
    workerId,
    upstream,
  }: {
    runId: string;
    workerId: string;
    upstream: T.UpstreamRecord;
  }) {
    const run = this.runs.get(runId);
    if (run?.status !== "processing" || run.leaseOwner !== workerId) return false;
    run.upstream = copy(upstream);
    return true;
  }

  async setProgress(runId: string, progress: number) {
    const run = this.runs.get(runId);
    if (run?.status === "processing") run.progress = progress;
  }

  async completeRun({
    runId,
    outcome,
    now,
    organizationId,
    leaseOwner,
  }: {
    runId: string;
    outcome: T.RunOutcome;
    now: Date;
    organizationId?: string;
    leaseOwner?: string;
  }) {
    const run = this.runs.get(runId);
    if (!run) return { kind: "not_found" } as const;
    const decision = decideEnd(run, { organizationId, leaseOwner });
    if (!decision.ok) {
      return decision.reason === "not_found"
        ? ({ kind: "not_found" } as const)
        : ({ kind: decision.reason, run: copy(run) } as const);
    }
    const org = this.organizations.get(run.organizationId);
    const key = this.apiKeys.get(run.apiKeyId);
    if (!org || !key) throw new Error(`run ${runId} has no organization or key`);

    const settled = settleRun(run, outcome);
    org.reserved -= settled.released;
    org.balance -= settled.charged;
    org.totalSpent += settled.charged;
    org.inFlight += settled.inFlightDelta;
    key.inFlight += settled.inFlightDelta;
    this.queue.delete(run.id);
    this.inFlight.delete(run.id);
    run.status = settled.status;
    run.charged = settled.charged;
    run.billableSeconds = settled.billableSeconds;
    run.output = outcome.status === "succeeded" ? outcome.output : null;
    run.error = outcome.status === "succeeded" ? null : outcome.error;
    run.progress = settled.progress;
    run.completedAt = now;
    run.leaseOwner = null;
    run.leaseExpiresAt = null;
    if (run.webhookUrl && settled.webhookEvent) {
      const delivery: WebhookDelivery = {
        id: webhookIdOf(run.id),
        runId: run.id,
        organizationId: run.organizationId,
        url: run.webhookUrl,
        eventType: settled.webhookEvent,
        payload: null,
        attempts: 0,
        nextAttemptAt: now,
        state: "pending",
        lastError: null,
        deliveredAt: null,
      };
      this.webhooks.set(delivery.id, delivery);
      this.pendingWebhooks.set(delivery.id, delivery);
    }
    return { kind: "completed", run: copy(run) } as const;
  }

  async findOverdueRuns({ createdBefore, limit }: { createdBefore: Date; limit: number }) {
    const overdue: RunRecord[] = [];
    for (const run of this.inFlight.values()) {
      if (overdue.length >= limit) break;
      if (isInFlight(run.status) && run.createdAt < createdBefore) overdue.push(copy(run));
    }
    return overdue;
  }

  async requeueExpiredLeases({ now, maxAttempts, limit }: { now: Date; maxAttempts: number; limit: number }) {
    const requeued: string[] = [];
    const exhausted: RunRecord[] = [];
    for (const run of this.inFlight.values()) {
      if (requeued.length + exhausted.length >= limit) break;
      if (run.status !== "processing" || !run.leaseExpiresAt || run.leaseExpiresAt > now) continue;
      if (run.attempts >= maxAttempts) {
        exhausted.push(copy(run));
        continue;
      }
      run.status = "queued";
      run.leaseOwner = null;
      run.leaseExpiresAt = null;
      run.progress = null;
      this.queue.set(run.id, true);
      requeued.push(run.id);
    }
    return { requeued, exhausted };
  }

  async claimWebhookDeliveries({ now, limit, leaseMs }: { now: Date; limit: number; leaseMs: number }) {
    const due: WebhookDelivery[] = [];
    for (const delivery of this.pendingWebhooks.values()) {
      if (due.length >= limit) break;
      if (delivery.state !== "pending" || delivery.nextAttemptAt > now) continue;
      // Held for leaseMs: another dispatcher will not take it unless this one dies.
      delivery.nextAttemptAt = new Date(now.getTime() + leaseMs);
      due.push(copy(delivery));
    }
    return due;
  }

  async recordWebhookAttempt(id: string, result: T.WebhookAttemptResult) {
    const delivery = this.webhooks.get(id);
    if (delivery?.state !== "pending") return;
    delivery.attempts += 1;
    delivery.payload ??= result.payload;
    if (result.ok) {
      this.pendingWebhooks.delete(id);
      delivery.state = "delivered";
      delivery.deliveredAt = result.now;
      delivery.lastError = null;
    } else {
      delivery.lastError = result.error;
      if (result.retryAt) delivery.nextAttemptAt = result.retryAt;
      else {
        delivery.state = "failed";
        this.pendingWebhooks.delete(id);
      }
    }
  }

  async listWebhookDeliveries(runId: string) {
    return [...this.webhooks.values()].filter((d) => d.runId === runId).map(copy);
  }

  async ping() {
    if (this.closed) throw new Error("store is closed");
  }

  async close() {
    this.closed = true;
  }
}

function matches(run: RunRecord, search: T.RunSearch): boolean {
  if (search.statuses && !search.statuses.includes(run.status)) return false;
  if (search.endpoint && run.endpoint !== search.endpoint) return false;
  if (search.createdAfter && run.createdAt < search.createdAfter) return false;
  if (search.createdBefore && run.createdAt >= search.createdBefore) return false;
  if (search.metadata) {
    for (const [k, v] of Object.entries(search.metadata)) if (run.metadata[k] !== v) return false;
  }
  return true;
}

/** Keyset order: newer createdAt first, then larger id first. */
function newestFirst(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
