import type { WebhookSubscription } from "@refvid/core";
import { describe, expect, it } from "vitest";
import type { Store } from "../types.js";
import { at, attempt, failed, makeTenant, newRun, scopeOf } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const HOOK = "https://example.com/hook";

/** A processing run (claimed at `at(1)`) whose webhook asked for `events`. */
async function processing(store: Store, events?: WebhookSubscription[]) {
  const tenant = await makeTenant(store, { balance: 10_000_000 });
  const run = newRun(tenant, { webhookUrl: HOOK, ...(events ? { webhookEvents: events } : {}) });
  await store.admitRun({ run, now: at(0) });
  await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 60_000, now: at(1) });
  return { tenant, runId: run.id };
}

/** The ids of the deliveries due at `now`, claimed. */
const claimIds = async (store: Store, now: Date) =>
  (await store.claimWebhookDeliveries({ now, limit: 10, leaseMs: 30_000 })).map((d) => d.id);

const delivered = (store: Store, id: string, sentAt: Date) =>
  store.recordWebhookAttempt(id, { ...attempt(sentAt, sentAt, 200), ok: true, payload: "{}" });

/** A run's webhook events besides its end (`webhook_events`): when they are queued and sent. */
export function webhookEventsContract(makeStore: StoreFactory): void {
  describe("webhook events of a run", () => {
    it("queue nothing but the terminal event unless the run's webhook asked for more", async () => {
      const store = await makeStore();
      const { runId } = await processing(store);
      await store.setProgress(runId, 0.5, at(2));
      await store.setQueuePosition(runId, 4, at(3));
      expect(await store.listWebhookDeliveries(runId)).toEqual([]);
      await store.completeRun({ runId, outcome: failed, now: at(4) });
      expect((await store.listWebhookDeliveries(runId)).map((d) => d.eventType)).toEqual(["run.failed"]);
    });

    it("queue run.started with the claim, once per run, with the run's state then", async () => {
      const store = await makeStore();
      const { runId } = await processing(store, ["started", "completed"]);
      const started = await store.listWebhookDeliveries(runId);
      expect(started).toMatchObject([
        {
          eventType: "run.started",
          url: HOOK,
          createdAt: at(1),
          nextAttemptAt: at(1),
          state: "pending",
          runState: { at: at(1), progress: null, queuePosition: null },
        },
      ]);
      expect(started[0]?.id).toBe(`msg_${runId.slice(4)}_started`);
      // Its lease lost and the run claimed again: no second run.started.
      expect(
        (await store.requeueExpiredLeases({ now: at(70_000), maxAttempts: 3, limit: 10 })).requeued,
      ).toEqual([runId]);
      await store.claimRuns({ workerId: "w2", limit: 1, leaseMs: 60_000, now: at(70_001) });
      expect(await store.listWebhookDeliveries(runId)).toHaveLength(1);
      // A progress change of a webhook that did not ask for progress queues nothing.
      await store.setProgress(runId, 0.5, at(70_002));
      expect(await store.listWebhookDeliveries(runId)).toHaveLength(1);
    });

    it("merge progress changes into the event not yet sent, then space the next a second after the last one's first attempt", async () => {
      const store = await makeStore();
      const { tenant, runId } = await processing(store, ["progress"]);
      await store.setProgress(runId, 0.1, at(10));
      await store.setProgress(runId, 0.2, at(20));
      await store.setQueuePosition(runId, 3, at(30));
      const [merged, ...more] = await store.listWebhookDeliveries(runId);
      expect(more).toEqual([]);
      expect(merged).toMatchObject({
        eventType: "run.progress",
        createdAt: at(10),
        nextAttemptAt: at(10),
        runState: { at: at(30), progress: 0.2, queuePosition: 3 },
      });
      expect(merged?.id).toMatch(new RegExp(`^msg_${runId.slice(4)}_progress_\\d+$`));

      const [claimed] = await store.claimWebhookDeliveries({ now: at(40), limit: 10, leaseMs: 30_000 });
      expect(claimed).toMatchObject({ id: merged?.id, runState: { progress: 0.2, queuePosition: 3 } });
      // Being sent: a change now is a new event, due a second after that attempt began...
      await store.setProgress(runId, 0.3, at(50));
      const next = (await store.listWebhookDeliveries(runId))[1];
      expect(next).toMatchObject({ nextAttemptAt: at(1040), runState: { progress: 0.3 } });
      expect(next?.id).not.toBe(merged?.id);
      // ...and sent a second after it ended, even when made due sooner (a redelivery).
      await delivered(store, merged?.id as string, at(60));
      await store.redeliverWebhook({ ...scopeOf(tenant), id: next?.id as string, now: at(500) });
      expect(await claimIds(store, at(500))).toEqual([]);
      expect(await claimIds(store, at(1059))).toEqual([]);
      expect(await claimIds(store, at(1060))).toEqual([next?.id]);
    });

    it("send a run's events in order, each after the first attempt of those before it, never after their retries", async () => {
      const store = await makeStore();
      const { runId } = await processing(store, ["started", "progress", "completed"]);
      await store.setProgress(runId, 0.5, at(2));
      const [started, progress] = (await store.listWebhookDeliveries(runId)).map((d) => d.id);
      expect(await claimIds(store, at(2))).toEqual([started]);
      await store.recordWebhookAttempt(started as string, {
        ...attempt(at(2), at(3), 500),
        ok: false,
        payload: "{}",
        error: "HTTP 500",
        retryAt: at(5000),
      });
      expect(await claimIds(store, at(3))).toEqual([progress]);
      // A change while that one is sent waits a second; the run ends first, and its end replaces it.
      await store.setProgress(runId, 0.6, at(4));
      expect(await store.listWebhookDeliveries(runId)).toHaveLength(3);
      await store.completeRun({ runId, outcome: failed, now: at(5) });
      const all = await store.listWebhookDeliveries(runId);
      expect(all.map((d) => [d.id, d.eventType])).toEqual([
        [started, "run.started"],
        [progress, "run.progress"],
        [`msg_${runId.slice(4)}`, "run.failed"],
      ]);
      expect(all[2]?.runState).toBeNull();
      // The end waits for the progress event being sent, not for run.started's retry.
      expect(await claimIds(store, at(6))).toEqual([]);
      await delivered(store, progress as string, at(7));
      expect(await claimIds(store, at(8))).toEqual([`msg_${runId.slice(4)}`]);
      expect(await claimIds(store, at(5000))).toEqual([started]);
    });

    it("keep a progress event not yet sent when the run's webhook does not get the end", async () => {
      const store = await makeStore();
      const { runId } = await processing(store, ["progress"]);
      await store.setProgress(runId, 0.5, at(2));
      const [first] = await claimIds(store, at(2));
      await delivered(store, first as string, at(2));
      await store.setProgress(runId, 0.9, at(3));
      await store.completeRun({ runId, outcome: failed, now: at(4) });
      const last = (await store.listWebhookDeliveries(runId)).map((d) => d.eventType);
      expect(last).toEqual(["run.progress", "run.progress"]);
      const [claimed] = await store.claimWebhookDeliveries({ now: at(1002), limit: 10, leaseMs: 30_000 });
      expect(claimed).toMatchObject({ eventType: "run.progress", runState: { at: at(3), progress: 0.9 } });
    });

    it("show every event of a run in the delivery log, newest first, with its type", async () => {
      const store = await makeStore();
      const { tenant, runId } = await processing(store, ["started", "progress", "completed"]);
      const [started] = await claimIds(store, at(1));
      await delivered(store, started as string, at(1));
      await store.setProgress(runId, 0.5, at(2));
      await store.completeRun({ runId, outcome: failed, now: at(3) });
      // The progress event was not sent before the end: the end replaced it.
      const log = await store.searchWebhookDeliveries({ ...scopeOf(tenant), runId, limit: 10 });
      expect(log.map((d) => d.eventType)).toEqual(["run.failed", "run.started"]);
      expect(log[1]).toMatchObject({ id: started, state: "delivered", history: [{ status: 200 }] });
      const page = await store.searchWebhookDeliveries({ ...scopeOf(tenant), runId, limit: 1 });
      expect(page.map((d) => d.eventType)).toEqual(["run.failed"]);
      const after = { createdAt: page[0]?.createdAt as Date, id: page[0]?.id as string };
      expect(
        (await store.searchWebhookDeliveries({ ...scopeOf(tenant), runId, limit: 1, after })).map(
          (d) => d.id,
        ),
      ).toEqual([started]);
      expect(await store.getWebhookDelivery(tenant.organizationId, started as string)).toMatchObject({
        eventType: "run.started",
        runId,
      });
    });
  });
}
