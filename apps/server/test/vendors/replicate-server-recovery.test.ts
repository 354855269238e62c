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
const { headers, create, createWithVersion, created, get, cancel, settle } = replicateClient(() => server);
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

interface Page {
  next: string | null;
  previous: string | null;
  results: Record<string, unknown>[];
}
async function listPage(url: string): Promise<Page> {
  const res = await fetch(url, { headers: headers() });
  expect(res.status).toBe(200);
  return (await res.json()) as Page;
}
const list = (query = "") => listPage(`${server.url}/v1/predictions${query}`);
const ids = (page: Page) => page.results.map((p) => p.id);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("GET /v1/predictions", () => {
  it("lists newest first, each prediction without its webhook or logs", async () => {
    await start({ knobs: { queueMs: 10_000 } });
    const webhook = `${receiver.url}/hooks/replicate?run=listed`;
    const made = [];
    for (const prompt of ["a", "b", "c"]) made.push(await created({ input: { prompt }, webhook }));
    const page = await list();
    expect(page).toMatchObject({ next: null, previous: null });
    expect(ids(page)).toEqual(made.map((p) => p.id).reverse());
    for (const entry of page.results) {
      expect(Object.keys(entry)).toEqual(
        expect.arrayContaining(["id", "model", "version", "input", "status", "created_at", "urls"]),
      );
      expect(entry).not.toHaveProperty("webhook");
      expect(entry).not.toHaveProperty("webhook_events_filter");
      expect(entry).not.toHaveProperty("logs");
    }
    expect(page.results[2]).toMatchObject({ input: { prompt: "a" }, status: "starting", source: "api" });
    // A single prediction shows the webhook it was created with.
    expect(await get(made[0] as Prediction)).toMatchObject({
      webhook,
      webhook_events_filter: ["output", "completed"],
    });
  });

  it("created_after keeps those created at or after, created_before those created before", async () => {
    await start({ knobs: { queueMs: 10_000 } });
    const a = await created();
    await pause(15);
    const b = await created();
    await pause(15);
    const c = await created();
    const at = (p: Prediction) => encodeURIComponent(p.created_at);
    expect(ids(await list(`?created_after=${at(b)}`))).toEqual([c.id, b.id]);
    expect(ids(await list(`?created_before=${at(b)}`))).toEqual([a.id]);
    expect(ids(await list(`?created_after=${at(a)}&created_before=${at(c)}`))).toEqual([b.id, a.id]);
    const bad = await fetch(`${server.url}/v1/predictions?created_after=yesterday`, { headers: headers() });
    expect(bad.status).toBe(400);
  });

  it("pages by cursor: next and previous links that keep the filters, unshifted by new predictions", async () => {
    await start({ listPageSize: 2, knobs: { queueMs: 10_000 } });
    const since = new Date(Date.now() - 1_000).toISOString();
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await created({ input: { prompt: `p${i}` } })).id);
    const [p0, p1, p2, p3, p4] = made;

    const first = await list(`?created_after=${encodeURIComponent(since)}`);
    expect([ids(first), first.previous]).toEqual([[p4, p3], null]);
    const next = new URL(first.next as string);
    expect(next.pathname).toBe("/v1/predictions");
    expect(next.searchParams.get("created_after")).toBe(since);
    expect(next.searchParams.get("cursor")).toMatch(/^[\w-]+$/);

    const newest = await created({ input: { prompt: "p5" } });
    const second = await listPage(first.next as string);
    expect(ids(second)).toEqual([p2, p1]);
    const third = await listPage(second.next as string);
    expect([ids(third), third.next]).toEqual([[p0], null]);

    const back = await listPage(third.previous as string);
    expect(ids(back)).toEqual([p2, p1]);
    const top = await listPage(back.previous as string);
    expect(ids(top)).toEqual([p4, p3]);
    expect(ids(await listPage(top.previous as string))).toEqual([newest.id]);

    const invalid = await fetch(`${server.url}/v1/predictions?cursor=bm9wZQ`, { headers: headers() });
    expect(invalid.status).toBe(404);
  });
});

describe("webhook knobs", () => {
  const webhookTo = (run: string) => `${receiver.url}/hooks/replicate?run=${run}`;
  const hooksFor = (run: string) => receiver.hooks.filter((h) => h.url === `/hooks/replicate?run=${run}`);

  it("without a filter, sends the default events: output and completed", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 40 } });
    await settle(await created({ input: { prompt: "p" }, webhook: webhookTo("default") }));
    // The server records a delivery once its receiver has answered: wait for its record, not the receipt.
    await until(() =>
      hooksFor("default").length === 2 && server.stats.webhooks.length === 2 ? true : undefined,
    );
    expect(server.stats.webhooks.map((w) => [w.event, w.status])).toEqual([
      ["output", "processing"],
      ["completed", "succeeded"],
    ]);
  });

  it("webhookDelayMs: each webhook leaves that long after its event", async () => {
    await start({ knobs: { queueMs: 10_000, webhookDelayMs: 300 } });
    const createdAt = Date.now();
    await created({ input: { prompt: "p" }, webhook: webhookTo("late"), webhook_events_filter: ["start"] });
    const [hook] = await until(() => (hooksFor("late").length > 0 ? hooksFor("late") : undefined));
    expect((hook?.receivedAt ?? 0) - createdAt).toBeGreaterThanOrEqual(300);
  });

  it("dropWebhooksNext: the next N creates with a webhook send none, and run as any other", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, dropWebhooksNext: 1 } });
    await created(); // no webhook: does not use it up
    const dropped = await created({ input: { prompt: "p" }, webhook: webhookTo("dropped") });
    const sent = await created({ input: { prompt: "p" }, webhook: webhookTo("sent") });
    await until(() => (hooksFor("sent").some((h) => h.body.includes('"succeeded"')) ? true : undefined));
    expect((await settle(dropped)).status).toBe("succeeded");
    await pause(100);
    expect(hooksFor("dropped")).toEqual([]);
    expect(server.stats.predictions.get(dropped.id)?.webhookDropped).toBe(true);
    expect(server.stats.predictions.get(sent.id)?.webhookDropped).toBe(false);
  });
});
