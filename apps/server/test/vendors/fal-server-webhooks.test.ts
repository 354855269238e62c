/**
 * The local fal queue's webhooks (fal-webhooks.ts): the body fal's Webhooks page shows, the ED25519
 * signature a receiver verifies with the published JWKS, key rotation, retries, and the knobs that
 * delay or drop deliveries.
 */
import { createHash, createPublicKey, type JsonWebKey, verify } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { FalServer } from "./fal-server.js";
import { startFalServer } from "./fal-server.js";
import { falClient, NO_VIDEO_KNOBS, type Submitted } from "./fal-test-client.js";
import { until } from "./until.js";
import { vendorInputSchema } from "./vendor-schemas.js";
import { type ReceivedHook, startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

const ENDPOINT = "fal-ai/refvid-test/reference-to-video";
/** An endpoint with its published input schema. */
const SEEDANCE = "bytedance/seedance-2.0/reference-to-video";
const defaults = NO_VIDEO_KNOBS;

let fal: FalServer;
let receiver: WebhookReceiver;
beforeAll(async () => {
  fal = await startFalServer({
    endpoints: [ENDPOINT, SEEDANCE],
    knobs: defaults,
    inputSchemas: { [SEEDANCE]: vendorInputSchema("fal", SEEDANCE) },
    webhookRetryDelaysMs: [20, 20],
  });
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await fal.close();
  await receiver.close();
});
afterEach(() => {
  Object.assign(fal.knobs, defaults);
  receiver.answers.length = 0;
});

const { key, submit, submitted, completed, pollUntil, cancel } = falClient(() => fal, ENDPOINT);

interface FalWebhookBody {
  request_id: string;
  gateway_request_id: string;
  status: "OK" | "ERROR";
  error?: string;
  payload: unknown;
}
const hookUrl = (run: string) => `${receiver.url}/hooks/fal?run=${run}`;
const hooksFor = (run: string) => receiver.hooks.filter((h) => h.url === `/hooks/fal?run=${run}`);
const bodyOf = (hook: ReceivedHook) => JSON.parse(hook.body) as FalWebhookBody;
const firstHook = (run: string) => until(() => hooksFor(run)[0]);
const resultOf = async (job: Submitted) => {
  const res = await fetch(job.response_url, { headers: key() });
  return { status: res.status, body: await res.json() };
};
const published = async () => ((await (await fetch(fal.jwksUrl)).json()) as { keys: JsonWebKey[] }).keys;

/** Verifies a delivery as fal's docs say a receiver should, against `keys`. */
function signedBy(hook: ReceivedHook, keys: JsonWebKey[]): boolean {
  const header = (name: string) => String(hook.headers[`x-fal-webhook-${name}`]);
  const digest = createHash("sha256").update(hook.body, "utf8").digest("hex");
  const lines = [header("request-id"), header("user-id"), header("timestamp"), digest];
  const message = Buffer.from(lines.join("\n"), "utf8");
  const signature = Buffer.from(header("signature"), "hex");
  return keys.some((jwk) => verify(null, message, createPublicKey({ key: jwk, format: "jwk" }), signature));
}

describe("fal webhooks: body and signature", () => {
  it("OK: the result's body as payload, signed with a key of the published JWKS", async () => {
    fal.knobs.malformedOutput = false;
    const job = await submitted({ prompt: "p", duration: "1" }, undefined, hookUrl("ok"));
    const hook = await firstHook("ok");
    const body = bodyOf(hook);
    expect(body).toEqual({
      request_id: job.request_id,
      gateway_request_id: job.request_id,
      status: "OK",
      payload: (await resultOf(job)).body,
    });
    expect(body.payload).toMatchObject({ video: { content_type: "video/mp4", file_name: "output.mp4" } });

    expect(hook.headers).toMatchObject({
      "content-type": "application/json",
      "x-fal-webhook-request-id": job.request_id,
      "x-fal-webhook-user-id": fal.userId,
    });
    const timestamp = Number(hook.headers["x-fal-webhook-timestamp"]);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(300);
    expect(hook.headers["x-fal-webhook-signature"]).toMatch(/^[0-9a-f]{128}$/);

    const keys = await published();
    expect(keys).toEqual([
      {
        kty: "OKP",
        crv: "Ed25519",
        x: expect.any(String),
        kid: expect.any(String),
        use: "sig",
        alg: "EdDSA",
      },
    ]);
    expect(signedBy(hook, keys)).toBe(true);
    expect(signedBy({ ...hook, body: hook.body.replace('"OK"', '"ERROR"') }, keys)).toBe(false);
    await expect
      .poll(() => fal.stats.webhooks.filter((w) => w.requestId === job.request_id), { timeout: 10_000 })
      .toEqual([{ requestId: job.request_id, attempt: 1, status: "OK", responseStatus: 200 }]);
  });

  it("ERROR: a model's error sends its status as `error` and its error body as payload", async () => {
    fal.knobs.failNext = 1;
    const job = await submitted(undefined, undefined, hookUrl("error"));
    const hook = await firstHook("error");
    const result = await resultOf(job);
    expect(result.status).toBe(500);
    expect(bodyOf(hook)).toEqual({
      request_id: job.request_id,
      gateway_request_id: job.request_id,
      status: "ERROR",
      error: "Invalid status code: 500",
      payload: result.body,
    });
    expect(signedBy(hook, await published())).toBe(true);
  });

  it("ERROR: an input the model refuses, as the docs' example (422 and its `detail`)", async () => {
    const job = await submitted({ image_urls: ["https://x/a.png"] }, SEEDANCE, hookUrl("refused"));
    const result = await resultOf(job);
    expect(result.status).toBe(422);
    expect(bodyOf(await firstHook("refused"))).toMatchObject({
      status: "ERROR",
      error: "Invalid status code: 422",
      payload: { detail: [{ loc: ["body", "prompt"], type: "missing" }] },
    });
    expect(bodyOf(await firstHook("refused")).payload).toEqual(result.body);
  });

  it("a submit without fal_webhook sends none", async () => {
    const before = receiver.hooks.length;
    await completed(await submitted());
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.hooks.length).toBe(before);
  });
});

describe("fal webhooks: cancelled requests", () => {
  it("cancelled IN_QUEUE: never processed, so no webhook", async () => {
    fal.knobs.queueMs = 10_000;
    const job = await submitted(undefined, undefined, hookUrl("queued"));
    await cancel(job);
    await completed(job);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(hooksFor("queued")).toEqual([]);
    expect(fal.stats.webhooks.filter((w) => w.requestId === job.request_id)).toEqual([]);
  });

  it("cancelled IN_PROGRESS: ERROR at once with the 499 its result gives", async () => {
    fal.knobs.latencyMs = 10_000;
    const job = await submitted(undefined, undefined, hookUrl("running"));
    await pollUntil(job, (s) => s.status === "IN_PROGRESS");
    await cancel(job);
    const hook = await firstHook("running");
    expect(bodyOf(hook)).toMatchObject({
      status: "ERROR",
      error: "Invalid status code: 499",
      payload: { detail: "Request cancelled by the client.", error_type: "client_cancelled" },
    });
  });

  it("cancelled IN_PROGRESS on a model that ignores it: OK when it completes", async () => {
    Object.assign(fal.knobs, { latencyMs: 150, honourCancel: false });
    const job = await submitted(undefined, undefined, hookUrl("ignored"));
    await pollUntil(job, (s) => s.status === "IN_PROGRESS");
    await cancel(job);
    expect(bodyOf(await firstHook("ignored")).status).toBe("OK");
  });
});

describe("fal webhooks: delivery", () => {
  it("retries a delivery answered non-2xx, each attempt signed afresh, the body the same", async () => {
    receiver.answers.push(500, 503);
    const job = await submitted(undefined, undefined, hookUrl("retry"));
    await until(() => (hooksFor("retry").length === 3 ? true : undefined));
    const hooks = hooksFor("retry");
    expect(hooks.map((h) => h.answered)).toEqual([500, 503, 200]);
    expect(new Set(hooks.map((h) => h.body)).size).toBe(1);
    const keys = await published();
    expect(hooks.every((h) => signedBy(h, keys))).toBe(true);
    await expect
      .poll(() => fal.stats.webhooks.filter((w) => w.requestId === job.request_id), { timeout: 10_000 })
      .toEqual([
        { requestId: job.request_id, attempt: 1, status: "OK", responseStatus: 500 },
        { requestId: job.request_id, attempt: 2, status: "OK", responseStatus: 503 },
        { requestId: job.request_id, attempt: 3, status: "OK", responseStatus: 200 },
      ]);
  });

  it("retries an unreachable receiver, then gives up", async () => {
    const job = await submitted(undefined, undefined, "http://127.0.0.1:9/hooks/fal?run=nowhere");
    const attempts = () => fal.stats.webhooks.filter((w) => w.requestId === job.request_id);
    await until(() => (attempts().length === 3 ? true : undefined));
    expect(attempts().map((w) => [w.attempt, w.responseStatus])).toEqual([
      [1, null],
      [2, null],
      [3, null],
    ]);
  });

  it("rotateSigningKey: the JWKS publishes the new key and the old; webhooks are signed with the new", async () => {
    const [old] = await published();
    fal.rotateSigningKey();
    const keys = await published();
    expect(keys).toHaveLength(2);
    expect(keys[1]).toEqual(old);
    expect(keys[0]?.kid).not.toBe(old?.kid);
    await submitted(undefined, undefined, hookUrl("rotated"));
    const hook = await firstHook("rotated");
    expect(signedBy(hook, [keys[0] as JsonWebKey])).toBe(true);
    expect(signedBy(hook, [old as JsonWebKey])).toBe(false);
  });

  it("webhookDelayMs: the webhook leaves that long after the request ends", async () => {
    fal.knobs.webhookDelayMs = 300;
    const submittedAt = Date.now();
    await submitted(undefined, undefined, hookUrl("late")); // ends 30 ms later
    const hook = await firstHook("late");
    expect(hook.receivedAt - submittedAt).toBeGreaterThanOrEqual(330);
  });

  it("dropWebhooksNext: the next N requests with a webhook never send it, and run as any other", async () => {
    fal.knobs.dropWebhooksNext = 1;
    await completed(await submitted()); // no webhook: does not use it up
    const dropped = await submitted(undefined, undefined, hookUrl("dropped"));
    const sent = await submitted(undefined, undefined, hookUrl("sent"));
    await firstHook("sent");
    await completed(dropped);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(hooksFor("dropped")).toEqual([]);
    expect(fal.stats.jobs.get(dropped.request_id)).toMatchObject({
      webhookDropped: true,
      status: "COMPLETED",
    });
    expect(fal.stats.jobs.get(sent.request_id)?.webhookDropped).toBe(false);
  });

  it("a submit whose answer was lost still sends its webhook", async () => {
    fal.knobs.loseAnswerNext = 1;
    await expect(submit(undefined, undefined, undefined, hookUrl("lost"))).rejects.toThrow(TypeError);
    const lost = [...fal.stats.jobs.values()].at(-1);
    expect(lost?.answerLost).toBe(true);
    expect(bodyOf(await firstHook("lost"))).toMatchObject({ request_id: lost?.requestId, status: "OK" });
  });
});
