/**
 * A Cog prediction's webhooks: non-terminal events throttled to `webhookIntervalMs`, the terminal
 * one retried on 429/5xx and connection errors with `webhookRetryBaseMs` · 2^n backoff
 * (crates/coglet/src/webhook.rs, `send_terminal`); deliveries lost on the way (`webhookDropNext`).
 * The sources are in cog-server.ts.
 */
import { fullBody, snapshot } from "./cog-bodies.js";
import type { CogContext } from "./cog-context.js";
import {
  COGLET_VERSION,
  type CogWebhookCall,
  type CogWebhookEvent,
  type Prediction,
} from "./cog-protocol.js";

/** Sends a prediction's webhook for `event`, when it asked for that event. */
export function cogWebhooks(ctx: CogContext) {
  const { knobs, stats, closing } = ctx;

  const postWebhook = async (
    p: Prediction,
    event: CogWebhookEvent,
    body: unknown,
    attempt: number,
  ): Promise<number | "error"> => {
    const call: CogWebhookCall = { id: p.job.id, event, attempt, status: p.job.status, answer: null };
    stats.webhooks.push(call);
    const drops = knobs.webhookDropNext[event] ?? 0;
    if (drops > 0) {
      knobs.webhookDropNext[event] = drops - 1;
      call.answer = "error";
      return "error";
    }
    try {
      const answer = await fetch(p.webhook?.url ?? "", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": knobs.flavor === "coglet" ? `coglet/${COGLET_VERSION}` : "cog-worker/0.16.0",
        },
        body: JSON.stringify(body),
        signal: closing,
      });
      await answer.arrayBuffer();
      call.answer = answer.status;
      return answer.status;
    } catch {
      call.answer = "error";
      return "error";
    }
  };

  return (p: Prediction, event: CogWebhookEvent) => {
    if (!p.webhook?.events.has(event) || closing.aborted) return;
    const body = ctx.isPython() ? fullBody(p) : snapshot(p, false);
    if (event !== "completed") {
      if (Date.now() - p.webhook.lastSentAt < knobs.webhookIntervalMs) return;
      p.webhook.lastSentAt = Date.now();
      void postWebhook(p, event, body, 1);
      return;
    }
    void (async () => {
      for (let attempt = 1; !closing.aborted; attempt++) {
        const answer = await postWebhook(p, event, body, attempt);
        const retryable = answer === "error" || [429, 500, 502, 503, 504].includes(answer);
        if (!retryable || attempt > knobs.webhookMaxRetries) return;
        await ctx.sleep(knobs.webhookRetryBaseMs * 2 ** Math.min(attempt, 10));
      }
    })();
  };
}
