import { describe, expect, it } from "vitest";
import { at, attempt, failed, makeTenant, newRun, succeeded } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

export function webhooksContract(makeStore: StoreFactory): void {
  describe("webhook outbox", () => {
    it("enqueues one delivery with the terminal transition, only when a webhook_url was given", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const withHook = newRun(tenant, { webhookUrl: "https://example.com/hook" });
      const without = newRun(tenant);
      for (const run of [withHook, without]) await store.admitRun({ run, now: at(0) });
      expect(await store.listWebhookDeliveries(withHook.id)).toEqual([]);
      await store.completeRun({ runId: withHook.id, outcome: succeeded(100_000), now: at(10) });
      await store.completeRun({ runId: withHook.id, outcome: failed, now: at(11) });
      await store.completeRun({ runId: without.id, outcome: failed, now: at(12) });
      const deliveries = await store.listWebhookDeliveries(withHook.id);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        url: "https://example.com/hook",
        eventType: "run.succeeded",
        state: "pending",
        attempts: 0,
        payload: null,
        environment: "live",
        createdAt: at(10),
        nextAttemptAt: at(10),
        redelivery: false,
      });
      expect(deliveries[0]?.id).toMatch(/^msg_/);
      expect(await store.listWebhookDeliveries(without.id)).toEqual([]);
    });

    it("leases due deliveries, retries on schedule with the same payload, then delivers", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { webhookUrl: "https://example.com/hook" });
      await store.admitRun({ run, now: at(0) });
      await store.completeRun({ runId: run.id, outcome: failed, now: at(10) });

      const [first] = await store.claimWebhookDeliveries({ now: at(10), limit: 10, leaseMs: 30_000 });
      if (!first) throw new Error("nothing claimed");
      // Leased: a second dispatcher does not get it.
      expect(await store.claimWebhookDeliveries({ now: at(11), limit: 10, leaseMs: 30_000 })).toEqual([]);
      await store.recordWebhookAttempt(first.id, {
        ...attempt(at(10), at(20), 500),
        ok: false,
        payload: '{"n":1}',
        error: "HTTP 500",
        retryAt: at(5020),
      });
      expect(await store.claimWebhookDeliveries({ now: at(5000), limit: 10, leaseMs: 30_000 })).toEqual([]);
      const [second] = await store.claimWebhookDeliveries({ now: at(5020), limit: 10, leaseMs: 30_000 });
      expect(second).toMatchObject({ id: first.id, attempts: 1, payload: '{"n":1}', lastError: "HTTP 500" });
      await store.recordWebhookAttempt(first.id, {
        ...attempt(at(5020), at(5030), 200),
        ok: true,
        payload: '{"n":2}',
      });
      const [done] = await store.listWebhookDeliveries(run.id);
      expect(done).toMatchObject({
        state: "delivered",
        attempts: 2,
        payload: '{"n":1}',
        deliveredAt: at(5030),
      });
      expect(await store.claimWebhookDeliveries({ now: at(999_999), limit: 10, leaseMs: 30_000 })).toEqual(
        [],
      );
    });

    it("gives up when told there is no retry left", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { webhookUrl: "https://example.com/hook" });
      await store.admitRun({ run, now: at(0) });
      await store.completeRun({ runId: run.id, outcome: failed, now: at(1) });
      const [delivery] = await store.claimWebhookDeliveries({ now: at(1), limit: 1, leaseMs: 1000 });
      if (!delivery) throw new Error("nothing claimed");
      await store.recordWebhookAttempt(delivery.id, {
        ...attempt(at(1), at(2), null),
        ok: false,
        payload: "{}",
        error: "timeout",
        retryAt: null,
      });
      expect((await store.listWebhookDeliveries(run.id))[0]).toMatchObject({
        state: "failed",
        lastError: "timeout",
      });
    });
  });
}
