/**
 * A prediction's life on the server's timers (`starting` → `processing` → a terminal status), its
 * JSON view, and its signed webhooks; the sources are listed in replicate-server.ts.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { InputCheck } from "./input-schema.js";
import {
  iso,
  type Prediction,
  type PredictionStatus,
  type ReplicateKnobs,
  type ReplicateStats,
  TERMINAL,
  tqdm,
  type WebhookEvent,
} from "./replicate-protocol.js";
import { postWebhook, sleep } from "./webhook-delivery.js";

/** What the server's parts share. */
export interface ReplicateContext {
  readonly knobs: ReplicateKnobs;
  readonly stats: ReplicateStats;
  readonly predictions: Map<string, Prediction>;
  readonly byFileKey: Map<string, Prediction>;
  /** Status calls held while `hangStatus` is set, released when it is cleared. */
  readonly hanging: Set<() => void>;
  readonly model: string;
  readonly versionId: string;
  /** Milliseconds in one protocol second. */
  readonly secondMs: number;
  /** Predictions a page of the list holds. */
  readonly listPageSize: number;
  /** The served model's input check, when its schema was given. */
  readonly checkInput: InputCheck | null;
  /** Aborted when the server closes. */
  readonly closing: AbortSignal;
  /** The server's base URL (known once it listens). */
  base(): string;
}

export interface WebhookSigning {
  /** The key Standard Webhooks signs with: the base64 part of the `whsec_` secret. */
  key: Buffer;
  /** Pauses between retries of a prediction's final webhook. */
  retryDelaysMs: number[];
}

/** A prediction's view, webhooks and lifecycle over `ctx`. */
export function predictionRunner(ctx: ReplicateContext, signing: WebhookSigning) {
  const { knobs, stats, model } = ctx;
  const { retryDelaysMs: retryDelays, key: webhookKey } = signing;
  const { closing } = ctx;

  const removed = (p: Prediction) =>
    p.completedAt !== null && Date.now() - p.completedAt >= knobs.dataRetentionMs;

  function view(p: Prediction): Record<string, unknown> {
    const gone = removed(p);
    const metrics: Record<string, number> = {};
    if (p.completedAt !== null) {
      if (p.startedAt !== null) metrics.predict_time = (p.completedAt - p.startedAt) / 1000;
      metrics.total_time = (p.completedAt - p.createdAt) / 1000;
    }
    const get = `${ctx.base()}/v1/predictions/${p.stat.id}`;
    return {
      id: p.stat.id,
      model,
      version: p.version,
      input: gone ? {} : p.stat.input,
      logs: gone ? "" : p.logs,
      output: gone ? null : p.output,
      data_removed: gone,
      error: p.error,
      status: p.status,
      source: "api",
      created_at: iso(p.createdAt),
      started_at: iso(p.startedAt),
      completed_at: iso(p.completedAt),
      ...(p.deadline === null ? {} : { deadline: iso(p.deadline) }),
      urls: { get, cancel: `${get}/cancel`, web: `${ctx.base()}/p/${p.stat.id}` },
      metrics,
      ...(p.webhook === null ? {} : { webhook: p.webhook, webhook_events_filter: [...p.events] }),
    };
  }

  /** A prediction as `GET /v1/predictions` lists it: without its logs and webhook (list example). */
  function listed(p: Prediction): Record<string, unknown> {
    const { logs: _logs, webhook: _webhook, webhook_events_filter: _filter, ...rest } = view(p);
    return rest;
  }

  // --- webhooks -------------------------------------------------------------------------------

  async function deliver(p: Prediction, event: WebhookEvent, body: string, status: PredictionStatus) {
    const webhookId = `msg_${randomBytes(16).toString("hex")}`;
    await postWebhook({
      url: p.webhook as string,
      body,
      headers: () => {
        const timestamp = String(Math.floor(Date.now() / 1000));
        const signature = createHmac("sha256", webhookKey)
          .update(`${webhookId}.${timestamp}.${body}`)
          .digest("base64");
        return {
          "content-type": "application/json",
          "webhook-id": webhookId,
          "webhook-timestamp": timestamp,
          "webhook-signature": `v1,${signature}`,
        };
      },
      // Only the final webhook is retried.
      retryDelaysMs: event === "completed" ? retryDelays : [],
      signal: closing,
      onAttempt: (attempt, responseStatus) =>
        stats.webhooks.push({ predictionId: p.stat.id, event, webhookId, attempt, status, responseStatus }),
    });
  }

  function notify(p: Prediction, event: WebhookEvent) {
    if (p.webhook === null || p.stat.webhookDropped || !p.events.has(event)) return;
    if (event === "logs" || event === "output") {
      // Replicate sends output and logs events at most once every 500 ms.
      if (Date.now() - p.lastThrottledWebhookAt < 500) return;
      p.lastThrottledWebhookAt = Date.now();
    }
    const body = JSON.stringify(view(p));
    const status = p.status;
    // Each webhook leaves `webhookDelayMs` after its event, in order.
    const due = Date.now() + knobs.webhookDelayMs;
    p.webhookChain = p.webhookChain
      .then(() => sleep(due - Date.now(), closing))
      .then(() => deliver(p, event, body, status));
  }

  // --- lifecycle ------------------------------------------------------------------------------

  function later(p: Prediction, ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      p.timers.delete(timer);
      fn();
    }, ms);
    p.timers.add(timer);
  }

  function setStatus(p: Prediction, status: PredictionStatus) {
    p.status = status;
    p.stat.status = status;
  }

  function finish(p: Prediction, status: PredictionStatus) {
    if (TERMINAL.has(p.status)) return;
    for (const timer of p.timers) clearTimeout(timer);
    p.timers.clear();
    setStatus(p, status);
    p.completedAt = Date.now();
    notify(p, "completed");
    for (const settled of p.onSettled) settled();
    p.onSettled.clear();
  }

  function outputOf(p: Prediction): unknown {
    const url = `${ctx.base()}/delivery/xezq/${p.fileKey}/output.mp4`;
    const shaped = (value: string) => (knobs.outputShape === "list" ? [value] : value);
    switch (p.malformed) {
      case "null":
        return null;
      case "empty-list":
        return [];
      case "not-a-url":
        return shaped("output.mp4");
      default:
        return shaped(url);
    }
  }

  function complete(p: Prediction) {
    p.logs += `${tqdm(p.steps, p.steps, p.latencyMs)}\n`;
    if (p.ending === "fail") {
      p.error = p.failMessage;
      p.logs += `Traceback (most recent call last):\n  File "predict.py", line 88, in predict\nRuntimeError: ${p.failMessage}\n`;
      return finish(p, "failed");
    }
    p.output = outputOf(p);
    notify(p, "output");
    finish(p, "succeeded");
  }

  function run(p: Prediction, queueMs: number) {
    notify(p, "start");
    later(p, queueMs, () => {
      if (p.ending === "abort") return finish(p, "aborted");
      setStatus(p, "processing");
      p.startedAt = Date.now();
      p.stat.paid = true;
      p.logs = "Generating video\n";
      notify(p, "logs");
      for (let step = 1; step < p.steps; step++) {
        later(p, (p.latencyMs * step) / p.steps, () => {
          p.logs += `${tqdm(step, p.steps, p.latencyMs)}\n`;
          notify(p, "logs");
        });
      }
      later(p, p.latencyMs, () => complete(p));
    });
    if (p.deadline !== null) {
      // Past its deadline a prediction is aborted if it never started, canceled if it was running.
      later(p, p.deadline - Date.now(), () => finish(p, p.status === "starting" ? "aborted" : "canceled"));
    }
  }

  return { removed, view, listed, finish, run };
}
