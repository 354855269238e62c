/**
 * `MemoryStore implements Store`: all state in Maps, for tests, benchmarks and `REFVID_STORE=memory`.
 * Every method runs to completion without awaiting, so each is atomic on Node's single thread.
 * Counters (in-flight, reserved) are kept with each transition, so admission, poll and account
 * are O(1) in the number of runs ever made. Each change is announced to `subscribe`rs as it is made.
 */

import {
  admissionHold,
  admissionState,
  afterAdmission,
  concurrencyRemaining,
  countRequest,
  decideAdmission,
  decideEnd,
  isInFlight,
  PRIORITY_RANK,
  type RateWindow,
  settleRun,
  webhookGets,
} from "@refvid/core";
import { keyAlerts, type NewAlertDelivery } from "./alert-deliveries.js";
import { MemoryAccounts } from "./memory/accounts.js";
import { copy, copyRun } from "./memory/copy.js";
import { MemoryDurations } from "./memory/durations.js";
import { MemoryIdempotency } from "./memory/idempotency.js";
import { MemoryOutbox } from "./memory/outbox.js";
import { deleteVideo, RunIndex } from "./memory/run-index.js";
import { MemoryRunProgress } from "./memory/run-progress.js";
import { RunQueue } from "./memory/run-queue.js";
import { serviceStatsOf } from "./memory/stats.js";
import { MemoryUploads } from "./memory/uploads.js";
import { tallyUsage } from "./memory/usage.js";
import { MemoryVendorLog } from "./memory/vendor-log.js";
import { hold, settle } from "./memory/wallet.js";
import { MAX_ARRIVALS_COUNTED } from "./queue-types.js";
import { queuedRun } from "./queued-run.js";
import { StoreEventHub } from "./store-events.js";
import type * as T from "./types.js";
import type { RunRecord, Store } from "./types.js";

export class MemoryStore implements Store {
  private readonly runs = new Map<string, RunRecord>();
  private readonly queue = new RunQueue(
    this.runs,
    (organizationId) => this.accounts.organizations.get(organizationId)?.queueWeight ?? 1,
  );
  /** Runs in keyset order per organization and environment, per key and overall, for search and usage. */
  private readonly index = new RunIndex();
  /** Organizations, keys and top-ups, with their admin lists; corrections may raise alerts. */
  private readonly accounts = new MemoryAccounts((deliveries) => this.alert(deliveries));
  readonly createOrganization = this.accounts.createOrganization;
  readonly getOrganization = this.accounts.getOrganization;
  readonly createApiKey = this.accounts.createApiKey;
  readonly getApiKey = this.accounts.getApiKey;
  readonly updateApiKey = this.accounts.updateApiKey;
  readonly revokeApiKey = this.accounts.revokeApiKey;
  readonly addTopUp = this.accounts.addTopUp;
  readonly reverseTopUp = this.accounts.reverseTopUp;
  readonly adjustBalance = this.accounts.adjustBalance;
  readonly listLedger = this.accounts.ledger.listLedger;
  readonly listAudit = this.accounts.ledger.listAudit;
  readonly recordAudit = this.accounts.ledger.recordAudit;
  readonly findApiKeyByHash = this.accounts.findApiKeyByHash;
  readonly rotateWebhookSecret = this.accounts.rotateWebhookSecret;
  readonly updateOrganization = this.accounts.updateOrganization;
  /** Reference uploads. */
  private readonly uploads = new MemoryUploads(this.accounts.organizations);
  readonly createUpload = this.uploads.createUpload;
  readonly uploadUsage = this.uploads.uploadUsage;
  readonly getUpload = this.uploads.getUpload;
  readonly deleteUpload = this.uploads.deleteUpload;
  readonly deleteExpiredUploads = this.uploads.deleteExpiredUploads;
  private readonly outbox = new MemoryOutbox();
  readonly recordWebhookAttempt: T.Store["recordWebhookAttempt"] = async (...args) =>
    this.outbox.record(...args);
  readonly searchWebhookDeliveries: T.Store["searchWebhookDeliveries"] = async (s) => this.outbox.search(s);
  readonly getWebhookDelivery: T.Store["getWebhookDelivery"] = async (...args) => this.outbox.get(...args);
  readonly redeliverWebhook: T.Store["redeliverWebhook"] = async (input) => this.outbox.redeliver(input);
  private readonly durations = new MemoryDurations();
  readonly recentDurations = this.durations.recentDurations;
  private readonly rateWindows = new Map<string, RateWindow>();
  private readonly idempotency = new MemoryIdempotency();
  readonly completeIdempotency = this.idempotency.completeIdempotency;
  readonly hasIdempotencyKey = this.idempotency.hasIdempotencyKey;
  /** Runs queued or processing, so the sweeper's scans cost O(in flight), not O(history). */
  private readonly inFlight = new Map<string, RunRecord>();
  private readonly events = new StoreEventHub();
  private readonly vendorLog = new MemoryVendorLog((runId) => this.events.emit({ kind: "vendor", runId }));
  readonly addVendorEvent = this.vendorLog.addVendorEvent;
  readonly listVendorEvents = this.vendorLog.listVendorEvents;
  readonly vendorHookPayload = this.vendorLog.vendorHookPayload;
  /** A processing run's vendor job, progress and vendor queue position. */
  private readonly progress = new MemoryRunProgress(
    this.runs,
    this.outbox,
    (runId, workerId) => this.heldBy(runId, workerId),
    (runId) => this.events.emit({ kind: "changed", runIds: [runId] }),
  );
  readonly recordUpstream = this.progress.recordUpstream;
  readonly findRunByUpstream = this.progress.findRunByUpstream;
  readonly setQueuePosition = this.progress.setQueuePosition;
  readonly setProgress = this.progress.setProgress;
  private closed = false;

  async countRequest(apiKeyId: string, limit: number, now: Date) {
    const decision = countRequest(this.rateWindows.get(apiKeyId), limit, now.getTime());
    this.rateWindows.set(apiKeyId, decision.window);
    return decision;
  }

  async admitRun({ run, idempotency, now }: Parameters<T.Store["admitRun"]>[0]) {
    const org = this.accounts.organizations.get(run.organizationId);
    const key = this.accounts.apiKeys.get(run.apiKeyId);
    if (!org || !key) return { kind: "api_key_gone" } as const;
    const earlier = idempotency ? this.idempotency.earlier(run.organizationId, idempotency, now) : null;
    if (earlier) return { kind: "idempotency", decision: earlier } as const;
    if (key.revokedAt) return { kind: "api_key_gone" } as const;
    const state = admissionState(org, key, now);
    const decision = decideAdmission(state, run.reserved);
    if (!decision.ok) {
      if (decision.reason === "budget") this.alert(keyAlerts(org, key, now, true));
      return { kind: "rejected", decision } as const;
    }
    const held = admissionHold(key.environment, run.reserved);
    this.alert(hold(this.accounts.ledger, org, key, run, held, now));
    const record = queuedRun(run, key.environment, PRIORITY_RANK[key.priority]);
    this.runs.set(run.id, record);
    this.queue.push(run.id);
    this.durations.arrived(record);
    this.inFlight.set(run.id, record);
    this.index.add(record);
    if (idempotency) this.idempotency.remember(run.organizationId, idempotency, run.id);
    const remaining = concurrencyRemaining(afterAdmission(state));
    const admitted = { kind: "admitted", run: copyRun(record), concurrencyRemaining: remaining } as const;
    // After the answer is made: a listener (a worker claiming at once) may change the run.
    this.events.emit({ kind: "queued" });
    return admitted;
  }

  async getRun(organizationId: string, runId: string) {
    const run = this.runs.get(runId);
    return run && run.organizationId === organizationId ? copyRun(run) : null;
  }

  async getRunById(runId: string) {
    const run = this.runs.get(runId);
    return run ? copyRun(run) : null;
  }

  async searchRuns(search: T.RunSearch) {
    return this.index.search(search).map(copyRun);
  }

  readonly deleteVideo: T.Store["deleteVideo"] = async (organizationId, runId, now) =>
    deleteVideo(this.runs.get(runId), organizationId, now);

  readonly listOrganizations = async (s: T.OrganizationSearch) =>
    this.accounts.index.listOrganizations(s).map(copy);
  readonly listApiKeys = async (s: T.ApiKeySearch) => this.accounts.index.listApiKeys(s).map(copy);
  readonly listTopUps = async (s: T.TopUpSearch) => this.accounts.index.listTopUps(s).map(copy);
  readonly searchAllRuns = async (s: T.AdminRunSearch) => this.index.searchAll(s).map(copyRun);

  readonly usage = async (q: T.UsageQuery) =>
    tallyUsage(this.index.createdBetween(q.from, q.to, q.organizationId), q.groupBy);

  async claimRuns({
    workerId,
    limit,
    leaseMs,
    now,
    skipEndpoints = [],
    skipDownloads,
  }: Parameters<T.Store["claimRuns"]>[0]) {
    const claimed: RunRecord[] = [];
    const skip = (queued: RunRecord) =>
      skipEndpoints.includes(queued.endpoint) ||
      ((skipDownloads?.organizationIds.includes(queued.organizationId) ?? false) &&
        (skipDownloads?.endpoints.includes(queued.endpoint) ?? false));
    for (const run of this.queue.take(limit, skip)) {
      run.status = "processing";
      run.startedAt ??= now;
      run.leaseOwner = workerId;
      run.leaseExpiresAt = new Date(now.getTime() + leaseMs);
      run.attempts += 1;
      if (webhookGets(run, "started")) this.outbox.started(run, now);
      claimed.push(copyRun(run));
    }
    if (claimed.length > 0) this.events.emit({ kind: "changed", runIds: claimed.map((run) => run.id) });
    return claimed;
  }

  async renewLease({ runId, workerId, leaseMs, now }: Parameters<T.Store["renewLease"]>[0]) {
    const run = this.heldBy(runId, workerId);
    if (!run) return false;
    run.leaseExpiresAt = new Date(now.getTime() + leaseMs);
    return true;
  }

  async acquireProvider({ runId, workerId, provider, limit }: Parameters<T.Store["acquireProvider"]>[0]) {
    const run = this.heldBy(runId, workerId);
    if (!run) return false;
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

  async queueStanding({ runId, provider, arrivalsSince }: Parameters<T.Store["queueStanding"]>[0]) {
    const run = this.runs.get(runId);
    if (run?.status !== "queued") return null;
    const holding = [...this.inFlight.values()].filter(
      (r) => r.status === "processing" && (provider ? r.provider === provider : r.endpoint === run.endpoint),
    );
    const { endpoint, organizationId } = run;
    const arrivals = this.durations.arrivalsByOthers(
      endpoint,
      organizationId,
      arrivalsSince,
      MAX_ARRIVALS_COUNTED,
    );
    return { ...this.queue.standing(run, holding), arrivalsByOthers: arrivals };
  }

  async releaseRun({ runId, workerId }: Parameters<T.Store["releaseRun"]>[0]) {
    const run = this.heldBy(runId, workerId);
    if (!run) return false;
    run.provider = null;
    run.attempts -= 1;
    if (run.attempts === 0) run.startedAt = null;
    this.backToQueue(run, true);
    return true;
  }

  async completeRun({
    runId,
    outcome,
    now,
    organizationId,
    environment,
    leaseOwner,
  }: Parameters<T.Store["completeRun"]>[0]) {
    const run = this.runs.get(runId);
    if (!run) return { kind: "not_found" } as const;
    const decision = decideEnd(run, { organizationId, environment, leaseOwner });
    if (!decision.ok) {
      return decision.reason === "not_found"
        ? ({ kind: "not_found" } as const)
        : ({ kind: decision.reason, run: copyRun(run) } as const);
    }
    const org = this.accounts.organizations.get(run.organizationId);
    const key = this.accounts.apiKeys.get(run.apiKeyId);
    if (!org || !key) throw new Error(`run ${runId} has no organization or key`);

    const settled = settleRun(run, outcome);
    settle(this.accounts.ledger, org, key, run, settled, now);
    this.queue.remove(run.id);
    this.inFlight.delete(run.id);
    run.status = settled.status;
    run.charged = settled.charged;
    run.billableSeconds = settled.billableSeconds;
    run.output = outcome.status === "succeeded" ? outcome.output : null;
    run.error = outcome.status === "succeeded" ? null : outcome.error;
    run.route = outcome.route ?? null;
    run.vendorCost = settled.vendorCost;
    run.progress = settled.progress;
    run.completedAt = now;
    run.leaseOwner = null;
    run.leaseExpiresAt = null;
    this.durations.add(run);
    if (settled.webhookEvent) this.outbox.ended(run, settled.webhookEvent, now);
    const completed = { kind: "completed", run: copyRun(run) } as const;
    this.events.emit({ kind: "ended", runId });
    return completed;
  }

  async findOverdueRuns({ createdBefore, limit }: Parameters<T.Store["findOverdueRuns"]>[0]) {
    const overdue: RunRecord[] = [];
    for (const run of this.inFlight.values()) {
      if (overdue.length >= limit) break;
      if (isInFlight(run.status) && run.createdAt < createdBefore) overdue.push(copyRun(run));
    }
    return overdue;
  }

  async requeueExpiredLeases({ now, maxAttempts, limit }: Parameters<T.Store["requeueExpiredLeases"]>[0]) {
    const requeued: string[] = [];
    const exhausted: RunRecord[] = [];
    for (const run of this.inFlight.values()) {
      if (requeued.length + exhausted.length >= limit) break;
      if (run.status !== "processing" || !run.leaseExpiresAt || run.leaseExpiresAt > now) continue;
      if (run.attempts >= maxAttempts) {
        exhausted.push(copyRun(run));
        continue;
      }
      run.progress = null;
      this.backToQueue(run);
      requeued.push(run.id);
    }
    if (requeued.length > 0) this.events.emit({ kind: "queued" });
    return { requeued, exhausted };
  }

  readonly claimWebhookDeliveries: T.Store["claimWebhookDeliveries"] = async (input) =>
    this.outbox.claim(input).map(copy);
  readonly listWebhookDeliveries: T.Store["listWebhookDeliveries"] = async (id) =>
    this.outbox.list(id).map(copy);

  readonly serviceStats: T.Store["serviceStats"] = async () =>
    serviceStatsOf(this.inFlight.values(), this.accounts.organizations.values(), this.outbox.pendingCount());

  /** Queues spend alerts' deliveries. */
  private readonly alert = (deliveries: readonly NewAlertDelivery[]) => {
    for (const delivery of deliveries) this.outbox.alert(delivery);
  };

  /** The run, when it is processing under this worker's lease. */
  private heldBy(runId: string, workerId: string): RunRecord | null {
    const run = this.runs.get(runId);
    return run?.status === "processing" && run.leaseOwner === workerId ? run : null;
  }

  /** A processing run goes back to its place in the queue, held by no worker. */
  private backToQueue(run: RunRecord, unstarted = false) {
    run.status = "queued";
    run.leaseOwner = null;
    run.leaseExpiresAt = null;
    this.queue.putBack(run, unstarted);
  }

  /** This process is the only one: the store's own changes are all there is to hear. */
  async subscribe(listener: (event: T.StoreEvent) => void) {
    const remove = this.events.add(listener);
    return async () => {
      remove();
    };
  }

  readonly ping = async () => {
    if (this.closed) throw new Error("store is closed");
  };
  readonly close = async () => {
    this.closed = true;
  };
}
