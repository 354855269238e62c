/**
 * The local Replicate server's knobs for a create whose answer is lost (lost-answer.ts), its record
 * of which predictions are paid, and the list a client searches for a prediction it may have
 * created.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type PredictionStat,
  type ReplicateServer,
  type ReplicateServerOptions,
  startReplicateServer,
} from "./replicate-server.js";
import { type Prediction, replicateClient } from "./replicate-test-client.js";
import { until } from "./until.js";
import { startWebhookReceiver, type WebhookReceiver } from "./webhook-receiver.js";

let server: ReplicateServer;
let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterAll(() => receiver.close());
afterEach(async () => {
  await server?.close();
  receiver.hooks.length = 0;
});

async function start(options: ReplicateServerOptions = {}) {
  server = await startReplicateServer({ webhookRetryDelaysMs: [], ...options });
  return server;
}
const { create, createWithVersion, created, get, cancel, settle } = replicateClient(() => server);
const lastStat = () => [...server.stats.predictions.values()].at(-1) as PredictionStat;
const hookStatuses = () => receiver.hooks.map((h) => (JSON.parse(h.body) as { status: string }).status);

describe("a create whose answer is lost", () => {
  it("drop: the connection closes unanswered, yet the prediction exists, runs and sends its webhooks", async () => {
    await start({ knobs: { queueMs: 10, latencyMs: 40, loseAnswerNext: 1 } });
    const webhook = `${receiver.url}/hooks/replicate?run=r1`;
    const body = { input: { prompt: "lost" }, webhook, webhook_events_filter: ["start", "completed"] };
    await expect(create(body)).rejects.toThrow(TypeError);

    expect(server.stats).toMatchObject({ submits: 1, submitAttempts: 1 });
    expect(server.stats.requests).toMatchObject([{ kind: "submit", status: 0, body }]);
    const stat = lastStat();
    expect(stat).toMatchObject({ answerLost: true, webhook, input: { prompt: "lost" } });
    const done = await settle(server.prediction(stat.id) as unknown as Prediction);
    expect(done.status).toBe("succeeded");
    expect(stat.paid).toBe(true);
    await until(() => (hookStatuses().includes("succeeded") ? true : undefined));
    expect(hookStatuses()).toEqual(["starting", "succeeded"]);
    expect(receiver.hooks.every((h) => h.url === "/hooks/replicate?run=r1")).toBe(true);

    expect((await create()).status).toBe(201);
    expect(lastStat().answerLost).toBe(false);
  });

  it("502: a gateway's Bad Gateway page on either create route, yet the predictions exist", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, loseAnswerNext: 2, loseAnswerAs: "502" } });
    const viaModel = await create({ input: { prompt: "one" } });
    const viaVersion = await createWithVersion({ version: server.model, input: { prompt: "two" } });
    for (const res of [viaModel, viaVersion]) {
      expect(res.status).toBe(502);
      expect(res.headers.get("content-type")).toBe("text/html");
      expect(await res.text()).toContain("502 Bad Gateway");
    }
    const stats = [...server.stats.predictions.values()];
    expect(stats.map((s) => [s.route, s.input.prompt, s.answerLost])).toEqual([
      ["model", "one", true],
      ["version", "two", true],
    ]);
    expect(server.stats.submits).toBe(2);
    await until(() => (stats.every((s) => s.status === "succeeded") ? true : undefined));
    expect((await create()).status).toBe(201);
  });

  it("in sync mode too, without waiting; and a refused create does not use it up", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 10_000, loseAnswerNext: 1 } });
    expect((await create({ input: {} })).status).toBe(422);
    const started = Date.now();
    await expect(create(undefined, { prefer: "wait=60" })).rejects.toThrow(TypeError);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(lastStat()).toMatchObject({ answerLost: true, preferWaitSeconds: 60 });
  });
});

describe("paid predictions", () => {
  it("one canceled or aborted while starting is never paid", async () => {
    await start({ secondMs: 20, knobs: { queueMs: 10_000 } });
    const canceled = await created();
    await cancel(canceled);
    const aborted = await created(undefined, { "cancel-after": "5s" });
    expect((await settle(aborted)).status).toBe("aborted");
    expect(server.stats.predictions.get(canceled.id)).toMatchObject({ status: "canceled", paid: false });
    expect(server.stats.predictions.get(aborted.id)).toMatchObject({ status: "aborted", paid: false });
  });

  it("one canceled while processing is paid, as is one that ran to its end, failed or not", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 10_000 } });
    const running = await created();
    await until(async () => ((await get(running)).status === "processing" ? true : undefined));
    await cancel(running);
    expect(server.stats.predictions.get(running.id)).toMatchObject({ status: "canceled", paid: true });

    Object.assign(server.knobs, { latencyMs: 20, failNext: 1 });
    const failed = await settle(await created());
    const succeeded = await settle(await created());
    expect(server.stats.predictions.get(failed.id)).toMatchObject({ status: "failed", paid: true });
    expect(server.stats.predictions.get(succeeded.id)).toMatchObject({ status: "succeeded", paid: true });
  });

  it("counts a run's paid predictions by the webhook URL its creates carried", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20 } });
    const hook = (run: string) => `${receiver.url}/hooks/replicate?run=${run}`;
    await settle(await created({ input: { prompt: "p" }, webhook: hook("a") }));
    await settle(await created({ input: { prompt: "p" }, webhook: hook("b") }));
    server.knobs.queueMs = 10_000;
    await cancel(await created({ input: { prompt: "p" }, webhook: hook("a") }));
    const paidFor = (run: string) =>
      [...server.stats.predictions.values()].filter((p) => p.paid && p.webhook === hook(run)).length;
    expect([paidFor("a"), paidFor("b")]).toEqual([1, 1]);
  });
});
