/**
 * fal's webhooks for the local queue, from fal's Webhooks page (docs.fal.ai/model-endpoints/webhooks,
 * also fal.ai/docs/documentation/model-apis/inference/webhooks):
 * - A submit with `?fal_webhook=<url>` gets a POST to that URL "once the request is done processing
 *   in the queue": `{request_id, gateway_request_id, status: "OK", payload}` with the result's body,
 *   or `status: "ERROR"` with `error` (the page's example: "Invalid status code: 422") and the error
 *   body as `payload`. Here every completed request that did not answer 2xx sends ERROR that way
 *   (model errors, refused inputs); `gateway_request_id` is the request id, as for a request that
 *   was not retried.
 * - Signed with ED25519: headers `x-fal-webhook-request-id`, `x-fal-webhook-user-id`,
 *   `x-fal-webhook-timestamp` (Unix seconds) and `x-fal-webhook-signature`, the hex signature of
 *   the UTF-8 lines `request id`, `user id`, `timestamp`, `hex SHA-256 of the raw body` joined by
 *   "\n"; a receiver verifies it with each key of fal's JWKS (rest.alpha.fal.ai/.well-known/
 *   jwks.json: OKP / Ed25519 keys, `x` base64url) and refuses timestamps over 5 minutes off
 *   ("Verifying Your Webhook", and public verifiers such as smarenkov/fal-ai-webhook-verification).
 *   Each attempt is signed afresh, so a retry carries a current timestamp.
 * - "If the webhook fails to deliver the payload, it will retry 10 times in the span of 2 hours":
 *   here a non-2xx answer or none is retried after each of `webhookRetryDelaysMs`.
 * Cancelled requests (decided from the docs, which say nothing outright): a request cancelled while
 * IN_QUEUE "is removed and never processed" (fal.ai/docs/documentation/development/handle-
 * cancellations), so it is never "done processing" and sends no webhook. One cancelled while running
 * on a model that honours the signal ends with the app's answer to it, the 499 `client_cancelled`
 * its result gives (Request Error Types), so it sends ERROR with "Invalid status code: 499" and that
 * body. One whose model ignores the signal completes and sends its webhook as any other.
 */
import { createHash, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import type { FalKnobs, FalStats, Job } from "./fal-job.js";
import type { FalOutcome } from "./fal-queue.js";
import { postWebhook, sleep } from "./webhook-delivery.js";

interface SigningKey {
  privateKey: KeyObject;
  /** The public key as the JWKS lists it. */
  jwk: { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; use: "sig"; alg: "EdDSA" };
}

function newSigningKey(): SigningKey {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const { x } = publicKey.export({ format: "jwk" }) as { x: string };
  // The key id is the key's RFC 7638 thumbprint.
  const kid = createHash("sha256")
    .update(JSON.stringify({ crv: "Ed25519", kty: "OKP", x }))
    .digest("base64url");
  return { privateKey, jwk: { kty: "OKP", crv: "Ed25519", x, kid, use: "sig", alg: "EdDSA" } };
}

export interface FalWebhooksInit {
  knobs: FalKnobs;
  stats: FalStats;
  userId: string;
  retryDelaysMs: readonly number[];
  /** The completed request's result, which the webhook carries as its payload. */
  outcome(job: Job): Promise<FalOutcome>;
}

/** Sends each request's webhook when it ends, signed with the server's current key. */
export function falWebhooks({ knobs, stats, userId, retryDelaysMs, outcome }: FalWebhooksInit) {
  const closing = new AbortController();
  const timers = new Map<string, NodeJS.Timeout>();
  const sending = new Set<Promise<void>>();
  /** The signer first, then the keys it replaced. */
  let keys = [newSigningKey()];

  function signed(requestId: string, body: string): Record<string, string> {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const digest = createHash("sha256").update(body, "utf8").digest("hex");
    const message = Buffer.from(`${requestId}\n${userId}\n${timestamp}\n${digest}`, "utf8");
    const signer = keys[0] as SigningKey;
    return {
      "content-type": "application/json",
      "x-fal-webhook-request-id": requestId,
      "x-fal-webhook-user-id": userId,
      "x-fal-webhook-timestamp": timestamp,
      "x-fal-webhook-signature": sign(null, message, signer.privateKey).toString("hex"),
    };
  }

  async function deliver(job: Job, url: string) {
    const { status, body: payload } = await outcome(job);
    const ok = status >= 200 && status < 300;
    const body = JSON.stringify({
      request_id: job.requestId,
      gateway_request_id: job.requestId,
      status: ok ? "OK" : "ERROR",
      ...(ok ? {} : { error: `Invalid status code: ${status}` }),
      payload,
    });
    await sleep(knobs.webhookDelayMs, closing.signal);
    await postWebhook({
      url,
      body,
      headers: () => signed(job.requestId, body),
      retryDelaysMs,
      signal: closing.signal,
      onAttempt: (attempt, responseStatus) =>
        stats.webhooks.push({
          requestId: job.requestId,
          attempt,
          status: ok ? "OK" : "ERROR",
          responseStatus,
        }),
    });
  }

  function send(job: Job) {
    timers.delete(job.requestId);
    if (job.webhookUrl === null) return;
    const delivery = deliver(job, job.webhookUrl).catch(() => {});
    sending.add(delivery);
    void delivery.finally(() => sending.delete(delivery));
  }

  return {
    jwks: () => ({ keys: keys.map((k) => k.jwk) }),
    rotate() {
      keys = [newSigningKey(), ...keys];
    },
    /** Sends the job's webhook when it ends on the clock, unless it has none or drops it. */
    watch(job: Job) {
      if (job.webhookUrl === null || job.webhookDropped) return;
      timers.set(
        job.requestId,
        setTimeout(() => send(job), Math.max(0, job.endsAt - Date.now())),
      );
    },
    /** A cancel ended the job early: a job that never left the queue sends none (see above). */
    stopped(job: Job) {
      const timer = timers.get(job.requestId);
      if (timer === undefined) return;
      clearTimeout(timer);
      timers.delete(job.requestId);
      if (job.paid) send(job);
    },
    async close() {
      closing.abort();
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      await Promise.allSettled([...sending]);
    },
  };
}
