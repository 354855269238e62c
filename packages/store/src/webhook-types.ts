/** A run's webhook deliveries as the outbox keeps them: the delivery, its attempts, its log and search. */
import type { Environment, WebhookEventType } from "@refvid/core";
import type { Keyset } from "./types.js";

/**
 * One event of a run's webhook: its terminal event (`completeRun`), and when the run's
 * `webhookEvents` ask for them its `run.started` (`claimRuns`, once per run) and `run.progress`
 * (`setProgress`, `setQueuePosition`: at most one not yet sent per run, the latest state merged
 * into it). A run's deliveries go out in the order they were queued: one is claimed only once the
 * first attempt of every earlier one has ended, and a progress event only a second or more after
 * the first attempt of the run's last one ended.
 */
export interface WebhookDelivery {
  /** `msg_…` (`webhook-id.ts`), sent as `webhook-id` on every attempt. */
  id: string;
  /** The run; null for an organization's spend alert, whose body is fixed when it is raised. */
  runId: string | null;
  organizationId: string;
  /** The run's environment: only keys of this environment see the delivery. */
  environment: Environment;
  /** When it was queued: the delivery log's order, with `id`. */
  createdAt: Date;
  url: string;
  eventType: WebhookEventType;
  /**
   * For `run.started` and `run.progress`: the run as it stood at the event, `processing` with this
   * progress and vendor queue position (for a progress event not yet sent, the latest). Null for a
   * terminal event, whose run no longer changes.
   */
  runState: RunStateAtEvent | null;
  /** The exact body, fixed at the first attempt so every retry sends the same bytes. */
  payload: string | null;
  attempts: number;
  nextAttemptAt: Date;
  state: "pending" | "delivered" | "failed";
  lastError: string | null;
  /** When an attempt was last acknowledged. */
  deliveredAt: Date | null;
  /** The pending attempt is a redelivery (`redeliverWebhook`) of an ended delivery: it is made once, never retried. */
  redelivery: boolean;
}

export interface RunStateAtEvent {
  at: Date;
  progress: number | null;
  queuePosition: number | null;
}

/** One request sent to a delivery's receiver. */
export interface WebhookAttempt {
  /** When it was sent. */
  at: Date;
  /** The receiver's HTTP status; null when no answer came. */
  status: number | null;
  /** Why it failed; null when acknowledged. */
  error: string | null;
  durationMs: number;
}

/** A delivery as its log shows it: with every attempt recorded, oldest first. */
export interface WebhookDeliveryLog extends WebhookDelivery {
  history: WebhookAttempt[];
}

export interface WebhookDeliverySearch {
  organizationId: string;
  environment: Environment;
  runId?: string;
  state?: WebhookDelivery["state"];
  limit: number;
  /** Keyset position: return deliveries strictly older than this (createdAt, id). */
  after?: Keyset;
}

/** How an attempt went: `now` is when it ended; `status` the receiver's HTTP status, when it answered. */
export type WebhookAttemptResult = {
  payload: string;
  now: Date;
  startedAt: Date;
  durationMs: number;
  status: number | null;
} & (
  | { ok: true }
  | {
      ok: false;
      error: string;
      /** When to try again; null: give up. */
      retryAt: Date | null;
    }
);
