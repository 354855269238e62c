/**
 * The webhook dispatcher on a MemoryStore and a ManualClock, delivering over real HTTP to a
 * loopback receiver: the retry schedule from the configuration is followed to the millisecond as
 * the clock moves, every attempt carries the same id and body, and the last one gives up.
 */
import { verifyWebhook } from "@refvid/client";
import { runErrors } from "@refvid/core";
import { WEBHOOK_SECRETS } from "@refvid/store/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../test/harness.js";
import { type LoopHarness, loopHarness } from "../../test/loop-harness.js";
import { WebhookDispatcher } from "./dispatcher.js";

/** The secret of makeTenant's live world, whose runs these are. */
const SECRET = WEBHOOK_SECRETS.live;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(answer: number) {
  const receiver: Receiver = await startReceiver((_request, res) => {
    res.writeHead(answer).end();
  });
  cleanups.push(() => receiver.close());
  const h: LoopHarness = await loopHarness({ REFVID_WEBHOOK_RETRY_DELAYS_MS: "0,1000,5000" });
  cleanups.push(() => h.close());
  const dispatcher = new WebhookDispatcher(h.deps, { pollMs: 500 });
  cleanups.push(() => dispatcher.stop());
  /** A run with a webhook, ended now (its event is due at once). */
  const endRun = async () => {
    const id = await h.admit({ webhookUrl: `${receiver.url}/hook` });
    await h.store.completeRun({
      runId: id,
      outcome: { status: "failed", error: runErrors.providerError("the model refused") },
      now: h.clock.now(),
    });
    return id;
  };
  const delivery = async (runId: string) => (await h.store.listWebhookDeliveries(runId))[0];
  return { ...h, receiver, dispatcher, endRun, delivery };
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

describe("the webhook dispatcher", () => {
  it("retries on the configured schedule, to the millisecond, and gives up after the last attempt", async () => {
    const { dispatcher, clock, receiver, endRun, delivery } = await setup(500);
    const runId = await endRun();
    const t0 = clock.now().getTime();

    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(1);
    expect(await delivery(runId)).toMatchObject({
      state: "pending",
      attempts: 1,
      lastError: "HTTP 500",
      nextAttemptAt: new Date(t0 + 1000),
    });

    await clock.advance(999);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(1);
    await clock.advance(1);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(2);
    expect(await delivery(runId)).toMatchObject({ attempts: 2, nextAttemptAt: new Date(t0 + 6000) });

    await clock.advance(4999);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(2);
    await clock.advance(1);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(3);
    expect(await delivery(runId)).toMatchObject({ state: "failed", attempts: 3, lastError: "HTTP 500" });

    await clock.advance(24 * 3_600_000);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(3);

    // One event: the same id and the same bytes every time, each signed at its own send time.
    const [first] = receiver.requests;
    expect(receiver.requests.map((r) => r.headers["webhook-timestamp"])).toEqual(
      [0, 1000, 6000].map((ms) => String(seconds(new Date(t0 + ms)))),
    );
    for (const attempt of receiver.requests) {
      expect(attempt.headers["webhook-id"]).toBe(`msg_${runId.replace(/^run_/, "")}`);
      expect(attempt.body).toBe(first?.body);
      const sentAt = new Date(Number(attempt.headers["webhook-timestamp"]) * 1000);
      const event = await verifyWebhook(attempt.body, attempt.headers, SECRET, { now: sentAt });
      expect(event).toMatchObject({ type: "run.failed", data: { run_id: runId, status: "failed" } });
    }
  });

  it("when running, sends an event as soon as its run ends and each retry as its time comes", async () => {
    const { dispatcher, clock, receiver, endRun, delivery } = await setup(500);
    dispatcher.start();
    const runId = await endRun(); // the store's ended event wakes the dispatcher
    const t0 = clock.now().getTime();
    await receiver.waitFor(1);
    await recorded(() => delivery(runId), 1);

    await clock.advance(999);
    expect(receiver.requests).toHaveLength(1);
    await clock.advance(1); // the poll at +1000 finds the retry due
    await receiver.waitFor(2);
    await recorded(() => delivery(runId), 2);

    await clock.advance(5000);
    await receiver.waitFor(3);
    await recorded(() => delivery(runId), 3);
    expect((await delivery(runId))?.state).toBe("failed");
    await clock.advance(60_000);
    expect(receiver.requests).toHaveLength(3);
    expect(receiver.requests.map((r) => r.headers["webhook-timestamp"])).toEqual(
      [0, 1000, 6000].map((ms) => String(seconds(new Date(t0 + ms)))),
    );
  });

  it("sends a delivered event once", async () => {
    const { dispatcher, clock, receiver, endRun, delivery } = await setup(204);
    const runId = await endRun();
    await dispatcher.tick();
    expect(await delivery(runId)).toMatchObject({ state: "delivered", attempts: 1, lastError: null });
    await clock.advance(24 * 3_600_000);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(1);
  });
});

describe("a run's start and progress events", () => {
  it("carry the run as it stood at each event, go out in order, and progress at most once a second", async () => {
    const { dispatcher, clock, receiver, store, admit } = await setup(200);
    const runId = await admit({
      webhookUrl: `${receiver.url}/hook`,
      webhookEvents: ["started", "progress", "completed"],
    });
    const t0 = clock.now().getTime();
    await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 60_000, now: clock.now() });
    await store.setProgress(runId, 0.25, clock.now());
    await dispatcher.tick(); // run.started; its progress waits for it
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(2);

    await clock.advance(200);
    await store.setProgress(runId, 0.5, clock.now());
    await clock.advance(300);
    await store.setProgress(runId, 0.6, clock.now()); // merged into the one waiting
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(2);
    await clock.advance(500);
    await dispatcher.tick();
    expect(receiver.requests).toHaveLength(3);
    await store.completeRun({
      runId,
      outcome: { status: "failed", error: runErrors.providerError("the model refused") },
      now: clock.now(),
    });
    await dispatcher.tick();

    const events = [];
    for (const request of receiver.requests) {
      const sentAt = new Date(Number(request.headers["webhook-timestamp"]) * 1000);
      events.push(await verifyWebhook(request.body, request.headers, SECRET, { now: sentAt }));
    }
    const iso = (ms: number) => new Date(t0 + ms).toISOString();
    expect(events.map((e) => [e.type, e.timestamp, e.data.status, e.data.progress])).toEqual([
      ["run.started", iso(0), "processing", null],
      ["run.progress", iso(0), "processing", 0.25],
      ["run.progress", iso(500), "processing", 0.6],
      ["run.failed", iso(1000), "failed", null],
    ]);
    expect(events.slice(0, 3).map((e) => [e.data.started_at, e.data.completed_at, e.data.billing])).toEqual([
      [iso(0), null, null],
      [iso(0), null, null],
      [iso(0), null, null],
    ]);
    expect(receiver.requests.map((r) => r.headers["webhook-id"])).toEqual([
      `msg_${runId.slice(4)}_started`,
      expect.stringMatching(/_progress_\d+$/),
      expect.stringMatching(/_progress_\d+$/),
      `msg_${runId.slice(4)}`,
    ]);
  });
});

/** Waits (on real I/O, not on time) until the store has recorded the delivery's `attempts`th attempt. */
async function recorded(read: () => Promise<{ attempts: number } | undefined>, attempts: number) {
  const deadline = Date.now() + 5000;
  while (((await read())?.attempts ?? 0) < attempts) {
    if (Date.now() > deadline) throw new Error(`attempt ${attempts} was never recorded`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
