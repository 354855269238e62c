/**
 * `serviceStats`, what operators' metrics read at each scrape: the queue, the runs in hand, the
 * webhook backlog and the money held, across every organization and environment.
 */
import { describe, expect, it } from "vitest";
import { at, attempt, failed, makeTenant, newRun, succeeded } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

export function statsContract(makeStore: StoreFactory): void {
  describe("service stats", () => {
    it("are zero with no runs", async () => {
      const store = await makeStore();
      await makeTenant(store, { balance: 10_000_000 });
      expect(await store.serviceStats()).toEqual({
        queuedRuns: 0,
        oldestQueuedAt: null,
        processingRuns: 0,
        pendingWebhooks: 0,
        reserved: 0,
      });
    });

    it("count queued and processing runs of every organization, and the oldest in the queue", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 10_000_000 });
      const other = await makeTenant(store, { balance: 10_000_000 });
      const sandbox = await makeTenant(store, { environment: "test" });
      const first = newRun(live, { createdAt: at(100), seconds: 2 });
      const second = newRun(other, { createdAt: at(200), seconds: 3 });
      const third = newRun(sandbox, { createdAt: at(300) });
      for (const run of [first, second, third]) await store.admitRun({ run, now: run.createdAt });
      expect(await store.serviceStats()).toEqual({
        queuedRuns: 3,
        oldestQueuedAt: at(100),
        processingRuns: 0,
        pendingWebhooks: 0,
        // Both live runs' reservations; a test run holds nothing.
        reserved: first.reserved + second.reserved,
      });

      const [claimed] = await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 30_000, now: at(400) });
      expect(claimed?.id).toBe(first.id);
      expect(await store.serviceStats()).toMatchObject({
        queuedRuns: 2,
        oldestQueuedAt: at(200),
        processingRuns: 1,
      });

      // A run back from a lost lease waits by its admission time again.
      await store.requeueExpiredLeases({ now: at(40_000), maxAttempts: 3, limit: 10 });
      expect(await store.serviceStats()).toMatchObject({
        queuedRuns: 3,
        oldestQueuedAt: at(100),
        processingRuns: 0,
      });

      for (const run of [first, second, third]) {
        await store.completeRun({ runId: run.id, outcome: failed, now: at(50_000) });
      }
      expect(await store.serviceStats()).toEqual({
        queuedRuns: 0,
        oldestQueuedAt: null,
        processingRuns: 0,
        pendingWebhooks: 0,
        reserved: 0,
      });
    });

    it("count webhook deliveries as pending until they are delivered or given up", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const delivered = newRun(tenant, { webhookUrl: "https://example.com/a" });
      const givenUp = newRun(tenant, { webhookUrl: "https://example.com/b" });
      const retrying = newRun(tenant, { webhookUrl: "https://example.com/c" });
      for (const run of [delivered, givenUp, retrying]) {
        await store.admitRun({ run, now: at(0) });
        await store.completeRun({ runId: run.id, outcome: succeeded(100_000), now: at(10) });
      }
      expect((await store.serviceStats()).pendingWebhooks).toBe(3);
      const claimed = await store.claimWebhookDeliveries({ now: at(10), limit: 10, leaseMs: 30_000 });
      expect(claimed).toHaveLength(3);
      // Claimed (leased to a dispatcher) is still pending.
      expect((await store.serviceStats()).pendingWebhooks).toBe(3);
      const idOf = (runId: string) => claimed.find((d) => d.runId === runId)?.id ?? "";
      await store.recordWebhookAttempt(idOf(delivered.id), {
        ...attempt(at(10), at(20), 200),
        ok: true,
        payload: "{}",
      });
      await store.recordWebhookAttempt(idOf(givenUp.id), {
        ...attempt(at(10), at(20), 500),
        ok: false,
        payload: "{}",
        error: "HTTP 500",
        retryAt: null,
      });
      await store.recordWebhookAttempt(idOf(retrying.id), {
        ...attempt(at(10), at(20), 500),
        ok: false,
        payload: "{}",
        error: "HTTP 500",
        retryAt: at(5000),
      });
      expect(await store.serviceStats()).toMatchObject({ pendingWebhooks: 1, reserved: 0, queuedRuns: 0 });
    });
  });
}
