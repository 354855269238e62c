/**
 * Delivers the webhook outbox: Standard Webhooks signatures with each active secret of the delivery's
 * environment (signing.ts), the same `webhook-id` and body on every attempt, retries on non-2xx,
 * timeouts and redirects (never followed) on the configured schedule; a redelivery asked for
 * through the API is tried once. Each attempt is recorded with its time, status and duration.
 * Delivery goes through the guarded fetcher, so a host that resolves into the operator's network
 * is refused at connect time. Which deliveries are due, in what order per run and how far apart a
 * run's progress events go, the store decides (`claimWebhookDeliveries`); a run's end wakes the
 * dispatcher, its start and progress are found by the poll.
 */
import { performance } from "node:perf_hooks";
import type { WebhookEvent } from "@refvid/api-types";
import type { RunRecord, RunStateAtEvent, WebhookDelivery } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import type { WebhookAttemptResult } from "../metrics/metrics.js";
import { FetchRefused, guardedFetch } from "../net/guarded-fetch.js";
import { PeriodicTask } from "../periodic-task.js";
import { toApiRun } from "../views/run-view.js";
import { videoEvent, videoOf } from "../views/video-view.js";
import { signingSecrets, signWithEach } from "./signing.js";

/** A receiver's answer is read (and discarded) up to this size. */
const RECEIVER_BODY_LIMIT = 1024 * 1024;

export class WebhookDispatcher {
  private readonly polling: PeriodicTask;
  private offEnded: () => void = () => {};
  private claiming = false;
  private stopped = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly deps: AppDeps,
    private readonly options: { pollMs?: number; batch?: number } = {},
  ) {
    this.polling = new PeriodicTask({
      intervalMs: options.pollMs ?? 500,
      scheduler: deps.scheduler,
      logger: deps.logger,
      failureMessage: "webhook dispatch failed",
      step: async () => {
        await this.claim();
      },
    });
  }

  start(): void {
    this.offEnded = this.deps.events.on("ended", () => void this.polling.trigger());
    this.polling.start();
  }

  /** Stops claiming; waits for the deliveries in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.offEnded();
    await this.polling.stop();
    await Promise.all(this.inFlight);
  }

  /** Claims the due deliveries and resolves once they have been sent and recorded (tests step the clock with it). */
  async tick(): Promise<void> {
    await Promise.all(await this.claim());
  }

  /**
   * Claims due deliveries up to the free slots and starts them without waiting for them, so a
   * receiver that takes its full timeout holds up only its own delivery. Returns the sends.
   */
  private async claim(): Promise<Promise<void>[]> {
    if (this.claiming || this.stopped) return [];
    const free = (this.options.batch ?? 20) - this.inFlight.size;
    if (free <= 0) return [];
    this.claiming = true;
    try {
      const { deps } = this;
      const leaseMs = deps.config.webhookTimeoutMs * 2 + 5000;
      const due = await deps.store.claimWebhookDeliveries({ now: deps.clock.now(), limit: free, leaseMs });
      return due.map((delivery) => {
        const send = this.deliver(delivery)
          .catch((err) => this.deps.logger.error({ err, webhookId: delivery.id }, "webhook delivery failed"))
          .finally(() => {
            this.inFlight.delete(send);
            // A full batch: more may be waiting. A started or progress event: its run's next one may be.
            if (due.length === free || delivery.runState) void this.polling.trigger();
          });
        this.inFlight.add(send);
        return send;
      });
    } finally {
      this.claiming = false;
    }
  }

  private async deliver(delivery: WebhookDelivery): Promise<void> {
    const { deps } = this;
    const log = deps.logger.child({ runId: delivery.runId, webhookId: delivery.id });
    const [org, run] = await Promise.all([
      deps.store.getOrganization(delivery.organizationId),
      delivery.runId === null ? null : deps.store.getRun(delivery.organizationId, delivery.runId),
    ]);
    // A spend alert's body was fixed when it was raised; a run event's is rendered at its first attempt.
    const payload = delivery.payload ?? (run ? this.render(delivery, run) : null);
    if (!org || payload === null) return;
    const startedAt = deps.clock.now();
    // The delivery's environment (its run's) picks the secret: a test event never verifies with the live one.
    const headers = await signWithEach(
      payload,
      signingSecrets(org.webhookSecrets[delivery.environment], startedAt),
      {
        id: delivery.id,
        timestamp: startedAt,
      },
    );
    // The duration is of real I/O, so it is measured on the monotonic clock, not the Clock port.
    const started = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    let result: WebhookAttemptResult = "delivered";
    try {
      const response = await guardedFetch(
        delivery.url,
        {
          method: "POST",
          headers: { ...headers, "content-type": "application/json", "user-agent": "refvid-webhooks/1" },
          body: payload,
        },
        {
          allowLocal: deps.config.allowLocalUrls,
          timeoutMs: deps.config.webhookTimeoutMs,
          maxBytes: RECEIVER_BODY_LIMIT,
          maxRedirects: 0,
        },
      );
      status = response.status;
      if (response.status < 200 || response.status > 299) {
        result = response.status >= 300 && response.status < 400 ? "redirect" : "http_error";
        error =
          response.status >= 300 && response.status < 400
            ? `redirect ${response.status} (not followed)`
            : `HTTP ${response.status}`;
      }
    } catch (err) {
      result =
        err instanceof FetchRefused ? (err.reason === "timeout" ? "timeout" : "refused") : "connection_error";
      error =
        err instanceof FetchRefused
          ? err.reason === "timeout"
            ? `no answer within ${deps.config.webhookTimeoutMs} ms`
            : `refused: ${err.message}`
          : `connection failed: ${(err as Error).message}`;
    }
    const now = deps.clock.now();
    const attempt = { payload, now, startedAt, status, durationMs: Math.round(performance.now() - started) };
    if (error === null) {
      deps.metrics.webhookAttempt(result, false);
      await deps.store.recordWebhookAttempt(delivery.id, { ...attempt, ok: true });
      log.info({ attempt: delivery.attempts + 1 }, "webhook delivered");
      return;
    }
    // The schedule's first entry is the first attempt; entry n+1 is the wait before retry n. A
    // redelivery is one attempt, never retried.
    const delay = delivery.redelivery ? undefined : deps.config.webhookRetryDelaysMs[delivery.attempts + 1];
    const retryAt = delay === undefined ? null : new Date(now.getTime() + delay);
    deps.metrics.webhookAttempt(result, retryAt === null);
    await deps.store.recordWebhookAttempt(delivery.id, { ...attempt, ok: false, error, retryAt });
    log.warn(
      { attempt: delivery.attempts + 1, error, retryAt },
      retryAt ? "webhook attempt failed; will retry" : "webhook given up",
    );
  }

  private render(delivery: WebhookDelivery, run: RunRecord): string {
    const { runState } = delivery;
    if (delivery.eventType.startsWith("video.")) {
      // A video of the `/v1/videos` surface ends in OpenAI's event shape.
      return videoEvent(
        delivery.id,
        delivery.eventType,
        run.completedAt ?? this.deps.clock.now(),
        videoOf(this.deps, run),
      );
    }
    const data = toApiRun(
      runState ? runAtEvent(run, runState) : run,
      this.deps.signer,
      this.deps.clock.now(),
    );
    const event: WebhookEvent = {
      type: delivery.eventType as WebhookEvent["type"],
      timestamp: runState?.at.toISOString() ?? data.completed_at ?? this.deps.clock.now().toISOString(),
      data,
    };
    return JSON.stringify(event);
  }
}

/** The run as it stood at a started or progress event: processing, with the progress of then. */
function runAtEvent(run: RunRecord, state: RunStateAtEvent): RunRecord {
  return {
    ...run,
    status: "processing",
    progress: state.progress,
    queuePosition: state.queuePosition,
    startedAt: run.startedAt ?? state.at,
    completedAt: null,
    output: null,
    error: null,
    charged: null,
    billableSeconds: null,
  };
}
