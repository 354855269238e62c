/**
 * MemoryOutbox: every delivery with its attempts, the pending ones in the order they were due, and
 * per organization and environment the delivery ids in keyset order (newest last) for the log.
 */
import type { WebhookEventType } from "@refvid/core";
import type {
  Environment,
  RunRecord,
  WebhookAttempt,
  WebhookAttemptResult,
  WebhookDelivery,
  WebhookDeliveryLog,
  WebhookDeliverySearch,
} from "../types.js";
import { webhookIdOf } from "../webhook-id.js";
import { newestFirst } from "./run-index.js";

const scopeOf = (organizationId: string, environment: Environment) => `${environment}\u0000${organizationId}`;

export class MemoryOutbox {
  private readonly deliveries = new Map<string, WebhookDelivery>();
  /** Deliveries still pending, so a claim never walks delivered or failed history. */
  private readonly pending = new Map<string, WebhookDelivery>();
  private readonly histories = new Map<string, WebhookAttempt[]>();
  private readonly byScope = new Map<string, string[]>();

  /** The one event of a run that just ended, due at once. */
  enqueue({
    run,
    url,
    eventType,
    now,
  }: {
    run: RunRecord;
    url: string;
    eventType: WebhookEventType;
    now: Date;
  }): void {
    const delivery: WebhookDelivery = {
      id: webhookIdOf(run.id),
      runId: run.id,
      organizationId: run.organizationId,
      environment: run.environment,
      createdAt: now,
      url,
      eventType,
      payload: null,
      attempts: 0,
      nextAttemptAt: now,
      state: "pending",
      lastError: null,
      deliveredAt: null,
      redelivery: false,
    };
    this.deliveries.set(delivery.id, delivery);
    this.pending.set(delivery.id, delivery);
    this.histories.set(delivery.id, []);
    this.index(delivery);
  }

  /** Due deliveries, each held for `leaseMs` so another dispatcher takes it only if this one dies (the live records: copy before handing out). */
  claim({ now, limit, leaseMs }: { now: Date; limit: number; leaseMs: number }): WebhookDelivery[] {
    const due: WebhookDelivery[] = [];
    for (const delivery of this.pending.values()) {
      if (due.length >= limit) break;
      if (delivery.state !== "pending" || delivery.nextAttemptAt > now) continue;
      delivery.nextAttemptAt = new Date(now.getTime() + leaseMs);
      due.push(delivery);
    }
    return due;
  }

  record(id: string, result: WebhookAttemptResult): void {
    const delivery = this.deliveries.get(id);
    if (delivery?.state !== "pending") return;
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
    return [...this.deliveries.values()].filter((d) => d.runId === runId);
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
      // One event per run: its delivery's id follows from the run's.
      const delivery = this.deliveries.get(webhookIdOf(search.runId));
      return matches(delivery) && delivery.runId === search.runId && search.limit > 0
        ? [this.logOf(delivery)]
        : [];
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

  private logOf(delivery: WebhookDelivery): WebhookDeliveryLog {
    return structuredClone({ ...delivery, history: this.histories.get(delivery.id) ?? [] });
  }

  /** Places a delivery in its scope's keyset order: an append unless another ended in the same millisecond. */
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
