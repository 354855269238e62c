/** MemoryStore's webhook outbox: every delivery, and the pending ones in the order they were due. */
import type { WebhookEventType } from "@refvid/core";
import type { RunRecord, WebhookAttemptResult, WebhookDelivery } from "../types.js";
import { webhookIdOf } from "../webhook-id.js";

export class MemoryOutbox {
  private readonly deliveries = new Map<string, WebhookDelivery>();
  /** Deliveries still pending, so a claim never walks delivered or failed history. */
  private readonly pending = new Map<string, WebhookDelivery>();

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
      url,
      eventType,
      payload: null,
      attempts: 0,
      nextAttemptAt: now,
      state: "pending",
      lastError: null,
      deliveredAt: null,
    };
    this.deliveries.set(delivery.id, delivery);
    this.pending.set(delivery.id, delivery);
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

  list(runId: string): WebhookDelivery[] {
    return [...this.deliveries.values()].filter((d) => d.runId === runId);
  }
}
