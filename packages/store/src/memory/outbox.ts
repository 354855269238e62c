/**
 * MemoryOutbox: every delivery with its attempts, the pending ones in the order they were queued,
 * each run's deliveries in order, and per organization and environment the delivery ids in keyset
 * order (newest last) for the log.
 */

import type { TerminalWebhookEvent, WebhookEventType } from "@refvid/core";
import type { NewAlertDelivery } from "../alert-deliveries.js";
import type {
  Environment,
  RunRecord,
  RunStateAtEvent,
  WebhookAttempt,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookDeliveryLog,
  WebhookDeliverySearch,
} from "../types.js";
import { progressWebhookIdOf, startedWebhookIdOf, webhookIdOf } from "../webhook-id.js";
import { newestFirst } from "./run-index.js";

const scopeOf = (organizationId: string, environment: Environment) => `${environment}\u0000${organizationId}`;

/** The least time between the first attempts of two progress events of one run. */
const PROGRESS_SPACING_MS = 1000;

const stateOf = (run: RunRecord, at: Date): RunStateAtEvent => ({
  at,
  progress: run.progress,
  queuePosition: run.queuePosition ?? null,
});

export class MemoryOutbox {
  private readonly deliveries = new Map<string, WebhookDelivery>();
  /** Deliveries still pending, so a claim never walks delivered or failed history. */
  private readonly pending = new Map<string, WebhookDelivery>();
  private readonly histories = new Map<string, WebhookAttempt[]>();
  private readonly byScope = new Map<string, string[]>();
  /** Each run's deliveries, in the order they were queued. */
  private readonly byRun = new Map<string, WebhookDelivery[]>();
  /** Each delivery's first attempt: when it was claimed, then when it ended. */
  private readonly firstAttempts = new Map<string, Date>();
  private seq = 0;

  /** The terminal event of a run that just ended, due at once: its progress event not yet sent is dropped. */
  ended(run: RunRecord, eventType: TerminalWebhookEvent, now: Date): void {
    const unsent = this.unsentProgress(run.id);
    if (unsent) this.drop(unsent);
    this.add(run, eventType, now, now, null, webhookIdOf(run.id));
  }

  /** The `run.started` event of a run a worker took, once per run. */
  started(run: RunRecord, now: Date): void {
    const id = startedWebhookIdOf(run.id);
    if (!this.deliveries.has(id)) this.add(run, "run.started", now, now, stateOf(run, now), id);
  }

  /**
   * A change of the run's progress: merged into its progress event not yet sent, or a new one, due
   * a second after the first attempt of the run's last one.
   */
  progressed(run: RunRecord, now: Date): void {
    const unsent = this.unsentProgress(run.id);
    if (unsent) {
      unsent.runState = stateOf(run, now);
      return;
    }
    const last = this.lastProgressAttempt(run.id);
    const due =
      last && last + PROGRESS_SPACING_MS > now.getTime() ? new Date(last + PROGRESS_SPACING_MS) : now;
    this.add(run, "run.progress", now, due, stateOf(run, now));
  }

  /** Due deliveries, each held for `leaseMs` so another dispatcher takes it only if this one dies (the live records: copy before handing out). */
  claim({ now, limit, leaseMs }: { now: Date; limit: number; leaseMs: number }): WebhookDelivery[] {
    const due: WebhookDelivery[] = [];
    for (const delivery of this.pending.values()) {
      if (due.length >= limit) break;
      if (delivery.state !== "pending" || delivery.nextAttemptAt > now || this.held(delivery, now)) continue;
      delivery.nextAttemptAt = new Date(now.getTime() + leaseMs);
      if (!this.firstAttempts.has(delivery.id)) this.firstAttempts.set(delivery.id, now);
      due.push(delivery);
    }
    return due;
  }

  record(id: string, result: WebhookAttemptResult): void {
    const delivery = this.deliveries.get(id);
    if (delivery?.state !== "pending") return;
    if (delivery.attempts === 0) this.firstAttempts.set(id, result.now);
    delivery.attempts += 1;
    delivery.payload ??= result.payload;
    delivery.redelivery = false;
    this.histories.get(id)?.push({
      at: result.startedAt,
      status: result.status,
      error: result.ok ? null : result.error,
      durationMs: result.durationMs,
    });
    if (result.ok) {
      this.pending.delete(id);
      delivery.state = "delivered";
      delivery.deliveredAt = result.now;
      delivery.lastError = null;
    } else {
      delivery.lastError = result.error;
      if (result.retryAt) delivery.nextAttemptAt = result.retryAt;
      else {
        delivery.state = "failed";
        this.pending.delete(id);
      }
    }
  }

  /** Deliveries neither delivered nor given up. */
  pendingCount(): number {
    return this.pending.size;
  }

  list(runId: string): WebhookDelivery[] {
    return [...(this.byRun.get(runId) ?? [])];
  }

  /** A page of the log, newest first. */
  search(search: WebhookDeliverySearch): WebhookDeliveryLog[] {
    const matches = (d: WebhookDelivery | undefined): d is WebhookDelivery =>
      d !== undefined &&
      d.organizationId === search.organizationId &&
      d.environment === search.environment &&
      (!search.state || d.state === search.state) &&
      (!search.after || newestFirst(d, search.after) > 0);
    if (search.runId !== undefined) {
      return (this.byRun.get(search.runId) ?? [])
        .filter(matches)
        .sort(newestFirst)
        .slice(0, Math.max(search.limit, 0))
        .map((delivery) => this.logOf(delivery));
    }
    const ids = this.byScope.get(scopeOf(search.organizationId, search.environment)) ?? [];
    const found: WebhookDeliveryLog[] = [];
    for (let i = search.after ? this.indexBefore(ids, search.after) : ids.length - 1; i >= 0; i--) {
      if (found.length >= search.limit) break;
      const delivery = this.deliveries.get(ids[i] as string);
      if (matches(delivery)) found.push(this.logOf(delivery));
    }
    return found;
  }

  get(organizationId: string, id: string): WebhookDeliveryLog | null {
    const delivery = this.deliveries.get(id);
    return delivery?.organizationId === organizationId ? this.logOf(delivery) : null;
  }

  redeliver({
    organizationId,
    environment,
    id,
    now,
  }: {
    organizationId: string;
    environment: Environment;
    id: string;
    now: Date;
  }): WebhookDeliveryLog | null {
    const delivery = this.deliveries.get(id);
    if (delivery?.organizationId !== organizationId || delivery.environment !== environment) return null;
    if (delivery.state !== "pending") {
      delivery.state = "pending";
      delivery.redelivery = true;
      this.pending.set(id, delivery);
    }
    delivery.nextAttemptAt = now;
    return this.logOf(delivery);
  }

  /** Queues a spend alert, its body fixed. */
  readonly alert = (alert: NewAlertDelivery): void => {
    const delivery: WebhookDelivery = {
      id: alert.id,
      runId: null,
      organizationId: alert.organizationId,
      environment: alert.environment,
      createdAt: alert.createdAt,
      url: alert.url,
      eventType: alert.eventType,
      runState: null,
      payload: alert.payload,
      attempts: 0,
      nextAttemptAt: alert.createdAt,
      state: "pending",
      lastError: null,
      deliveredAt: null,
      redelivery: false,
    };
    this.deliveries.set(delivery.id, delivery);
    this.pending.set(delivery.id, delivery);
    this.histories.set(delivery.id, []);
    this.index(delivery);
  };

  private add(
    run: RunRecord,
    eventType: WebhookEventType,
    now: Date,
    due: Date,
    runState: RunStateAtEvent | null,
    id?: string,
  ): void {
    this.seq += 1;
    const delivery: WebhookDelivery = {
      id: id ?? progressWebhookIdOf(run.id, this.seq),
      runId: run.id,
      organizationId: run.organizationId,
      environment: run.environment,
      createdAt: now,
      url: run.webhookUrl as string,
      eventType,
      runState,
      payload: null,
      attempts: 0,
      nextAttemptAt: due,
      state: "pending",
      lastError: null,
      deliveredAt: null,
      redelivery: false,
    };
    this.deliveries.set(delivery.id, delivery);
    this.pending.set(delivery.id, delivery);
    this.histories.set(delivery.id, []);
    this.index(delivery);
    const ofRun = this.byRun.get(run.id);
    if (ofRun) ofRun.push(delivery);
    else this.byRun.set(run.id, [delivery]);
  }

  /** Forgets a delivery never sent. */
  private drop(delivery: WebhookDelivery): void {
    this.deliveries.delete(delivery.id);
    this.pending.delete(delivery.id);
    this.histories.delete(delivery.id);
    const ids = this.byScope.get(scopeOf(delivery.organizationId, delivery.environment)) ?? [];
    ids.splice(ids.lastIndexOf(delivery.id), 1);
    const ofRun = delivery.runId === null ? [] : (this.byRun.get(delivery.runId) ?? []);
    ofRun.splice(ofRun.indexOf(delivery), 1);
  }

  /**
   * Whether a due delivery waits: an earlier event of its run has not had its first attempt yet
   * (the run's events go out in order), or it is a progress event within a second of the run's
   * last one.
   */
  private held(delivery: WebhookDelivery, now: Date): boolean {
    // An alert belongs to no run: nothing holds it.
    if (delivery.runId === null) return false;
    for (const earlier of this.byRun.get(delivery.runId) ?? []) {
      if (earlier === delivery) break;
      if (earlier.state === "pending" && earlier.attempts === 0) return true;
    }
    if (delivery.eventType !== "run.progress" || this.firstAttempts.has(delivery.id)) return false;
    const last = this.lastProgressAttempt(delivery.runId);
    return last !== undefined && now.getTime() - last < PROGRESS_SPACING_MS;
  }

  /** The run's progress event not yet claimed, if any (there is at most one). */
  private unsentProgress(runId: string): WebhookDelivery | undefined {
    return this.byRun
      .get(runId)
      ?.find((d) => d.eventType === "run.progress" && !this.firstAttempts.has(d.id));
  }

  /** The latest first attempt of the run's progress events (epoch ms; see `firstAttempts`). */
  private lastProgressAttempt(runId: string): number | undefined {
    let last: number | undefined;
    for (const d of this.byRun.get(runId) ?? []) {
      const sent = d.eventType === "run.progress" ? this.firstAttempts.get(d.id)?.getTime() : undefined;
      if (sent !== undefined && (last === undefined || sent > last)) last = sent;
    }
    return last;
  }

  private logOf(delivery: WebhookDelivery): WebhookDeliveryLog {
    return structuredClone({ ...delivery, history: this.histories.get(delivery.id) ?? [] });
  }

  /** Places a delivery in its scope's keyset order: an append unless another was queued in the same millisecond. */
  private index(delivery: WebhookDelivery): void {
    const scope = scopeOf(delivery.organizationId, delivery.environment);
    let ids = this.byScope.get(scope);
    if (!ids) {
      ids = [];
      this.byScope.set(scope, ids);
    }
    let at = ids.length;
    while (at > 0 && newestFirst(this.deliveryOf(ids[at - 1]), delivery) < 0) at--;
    ids.splice(at, 0, delivery.id);
  }

  /** Index of the newest delivery in `ids` strictly older than `cursor` (-1 if none). */
  private indexBefore(ids: string[], cursor: { createdAt: Date; id: string }): number {
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newestFirst(this.deliveryOf(ids[mid]), cursor) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  private deliveryOf(id: string | undefined): WebhookDelivery {
    return this.deliveries.get(id as string) as WebhookDelivery;
  }
}
