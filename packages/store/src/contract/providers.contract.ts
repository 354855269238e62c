/**
 * What the worker needs of the store to serve runs on model vendors: a run keeps the vendor job
 * serving it for whoever holds it next, a provider's slots are shared out atomically, and a run
 * whose provider is full goes back to the queue as it was.
 */
import { describe, expect, it } from "vitest";
import { at, failed, makeTenant, newRun } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const _cancelled = {
  status: "cancelled",
  error: { type: "cancelled", code: 499, message: "cancelled" },
} as const;

export function providersContract(makeStore: StoreFactory): void {
  describe("runs on model vendors", () => {
    it("keeps a run's vendor job for its lease holder only, through a requeue to the next worker", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      const [claimed] = await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 1000, now: at(1) });
      expect(claimed?.upstream).toBeNull();
      const upstream = {
        provider: "fal-main",
        id: "req_1",
        urls: { status: "https://queue.example/1/status" },
      };
      expect(await store.recordUpstream({ runId: run.id, workerId: "w2", upstream })).toBe(false);
      expect((await store.getRun(tenant.organizationId, run.id))?.upstream).toBeNull();
      expect(await store.recordUpstream({ runId: run.id, workerId: "w1", upstream })).toBe(true);
      expect((await store.getRun(tenant.organizationId, run.id))?.upstream).toEqual(upstream);
      // w1 dies; the run goes back to the queue and the next worker learns of the job.
      await store.requeueExpiredLeases({ now: at(1001), maxAttempts: 3, limit: 10 });
      const [resumed] = await store.claimRuns({ workerId: "w3", limit: 1, leaseMs: 1000, now: at(1100) });
      expect(resumed).toMatchObject({ id: run.id, upstream });
      await store.completeRun({ runId: run.id, outcome: failed, now: at(1200) });
      expect(await store.recordUpstream({ runId: run.id, workerId: "w3", upstream })).toBe(false);
    });

    it("gives a provider's slots to at most its limit of processing runs, across racing workers", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const runs = [newRun(tenant), newRun(tenant), newRun(tenant)];
      for (const [i, run] of runs.entries()) await store.admitRun({ run, now: at(i) });
      const claimed = await Promise.all(
        runs.map((_, i) => store.claimRuns({ workerId: `w${i}`, limit: 1, leaseMs: 30_000, now: at(10) })),
      );
      const held = claimed.flat();
      expect(held).toHaveLength(3);
      const got = await Promise.all(
        held.map((run) =>
          store.acquireProvider({ runId: run.id, workerId: run.leaseOwner ?? "", provider: "gpu", limit: 2 }),
        ),
      );
      expect(got.filter(Boolean)).toHaveLength(2);
      // Another provider's slots are its own; no limit, no count; only the lease holder may take one.
      const loser = held[got.indexOf(false)] as (typeof held)[number];
      expect(
        await store.acquireProvider({ runId: loser.id, workerId: "someone-else", provider: "fal" }),
      ).toBe(false);
      expect(
        await store.acquireProvider({
          runId: loser.id,
          workerId: loser.leaseOwner ?? "",
          provider: "fal",
          limit: 1,
        }),
      ).toBe(true);
      // A slot frees when its run ends.
      const winner = held[got.indexOf(true)] as (typeof held)[number];
      await store.completeRun({ runId: winner.id, outcome: failed, now: at(20) });
      expect(
        await store.acquireProvider({
          runId: loser.id,
          workerId: loser.leaseOwner ?? "",
          provider: "gpu",
          limit: 2,
        }),
      ).toBe(true);
    });

    it("gives a claimed run back to the queue as it was, and claims around skipped models", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const d = newRun(tenant); // model-d
      const a = { ...newRun(tenant), endpoint: "lab-a/model-a/reference-to-video" as const };
      await store.admitRun({ run: d, now: at(0) });
      await store.admitRun({ run: a, now: at(1) });
      const [first] = await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 1000, now: at(5) });
      expect(first?.id).toBe(d.id);
      expect(await store.releaseRun({ runId: d.id, workerId: "w2" })).toBe(false);
      expect(await store.releaseRun({ runId: d.id, workerId: "w1" })).toBe(true);
      expect(await store.getRun(tenant.organizationId, d.id)).toMatchObject({
        status: "queued",
        attempts: 0,
        startedAt: null,
        leaseOwner: null,
        provider: null,
      });
      const skipping = await store.claimRuns({
        workerId: "w2",
        limit: 5,
        leaseMs: 1000,
        now: at(6),
        skipEndpoints: [d.endpoint],
      });
      expect(skipping.map((r) => r.id)).toEqual([a.id]);
      const [again] = await store.claimRuns({ workerId: "w3", limit: 5, leaseMs: 1000, now: at(7) });
      expect(again).toMatchObject({ id: d.id, attempts: 1 });
    });

    it("leaves queued the runs of the models and organizations whose downloads it is told to skip", async () => {
      const store = await makeStore();
      const busy = await makeTenant(store, { balance: 10_000_000 });
      const other = await makeTenant(store, { balance: 10_000_000 });
      const modelA = "lab-a/model-a/reference-to-video" as const;
      const busyD = newRun(busy); // model-d
      const busyA = newRun(busy, { endpoint: modelA });
      const otherD = newRun(other);
      for (const [i, run] of [busyD, busyA, otherD].entries()) await store.admitRun({ run, now: at(i) });
      const claimed = await store.claimRuns({
        workerId: "w1",
        limit: 5,
        leaseMs: 1000,
        now: at(5),
        skipDownloads: { organizationIds: [busy.organizationId], endpoints: [busyD.endpoint] },
      });
      // The busy organization's other model, and the other organization's run of the same model, go.
      expect(claimed.map((r) => r.id).sort()).toEqual([busyA.id, otherD.id].sort());
      const [left] = await store.claimRuns({ workerId: "w2", limit: 5, leaseMs: 1000, now: at(6) });
      expect(left?.id).toBe(busyD.id);
    });
  });
}
