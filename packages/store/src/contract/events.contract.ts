import { describe, expect, it } from "vitest";
import type { StoreEvent } from "../types.js";
import { at, failed, makeTenant, newRun } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/**
 * The store is the one source of run events: each change is heard by the store's own subscribers
 * by the time the call that made it returns, once, and a call that changed nothing says nothing.
 */
export function eventsContract(makeStore: StoreFactory): void {
  describe("run events", () => {
    it("announces admission, claim, progress, requeue and the end, each once, as the calls return", async () => {
      const store = await makeStore();
      const heard: StoreEvent[] = [];
      const unsubscribe = await store.subscribe((event) => {
        if (event.kind !== "subscription") heard.push(event);
      });
      try {
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const run = newRun(tenant);
        await store.admitRun({ run, now: at(0) });
        expect(heard).toEqual([{ kind: "queued" }]);

        await store.claimRuns({ workerId: "w1", limit: 5, leaseMs: 1000, now: at(1) });
        expect(heard.slice(1)).toEqual([{ kind: "changed", runIds: [run.id] }]);
        await store.setProgress(run.id, 0.5, at(2));
        expect(heard.slice(2)).toEqual([{ kind: "changed", runIds: [run.id] }]);

        const requeue = await store.requeueExpiredLeases({ now: at(5000), maxAttempts: 3, limit: 10 });
        expect(requeue.requeued).toEqual([run.id]);
        expect(heard.slice(3)).toEqual([{ kind: "queued" }]);

        await store.completeRun({ runId: run.id, outcome: failed, now: at(6000) });
        expect(heard.slice(4)).toEqual([{ kind: "ended", runId: run.id }]);
      } finally {
        await unsubscribe();
      }
    });

    it("says nothing for calls that changed nothing, and nothing after unsubscribing", async () => {
      const store = await makeStore();
      const heard: StoreEvent[] = [];
      const unsubscribe = await store.subscribe((event) => {
        if (event.kind !== "subscription") heard.push(event);
      });
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const broke = await makeTenant(store, { balance: 1 });
      const run = newRun(tenant);
      try {
        expect((await store.admitRun({ run: newRun(broke), now: at(0) })).kind).toBe("rejected");
        expect(await store.claimRuns({ workerId: "w1", limit: 5, leaseMs: 1000, now: at(1) })).toEqual([]);
        await store.setProgress("run_unknown", 0.5, at(1));
        await store.requeueExpiredLeases({ now: at(2), maxAttempts: 3, limit: 10 });
        await store.admitRun({ run, now: at(3) });
        await store.completeRun({ runId: run.id, outcome: failed, now: at(4) });
        // Ended already: a second end and progress on an ended run change nothing.
        expect((await store.completeRun({ runId: run.id, outcome: failed, now: at(5) })).kind).toBe(
          "already_terminal",
        );
        await store.setProgress(run.id, 0.9, at(5));
        expect(heard).toEqual([{ kind: "queued" }, { kind: "ended", runId: run.id }]);
      } finally {
        await unsubscribe();
      }
      await store.admitRun({ run: newRun(tenant), now: at(6) });
      expect(heard).toHaveLength(2);
    });

    it("answers each call as of its own change, whatever a listener does on hearing it", async () => {
      const store = await makeStore();
      const claims: Promise<unknown>[] = [];
      const unsubscribe = await store.subscribe((event) => {
        if (event.kind === "queued") {
          claims.push(store.claimRuns({ workerId: "eager", limit: 1, leaseMs: 1000, now: at(1) }));
        }
      });
      try {
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const admitted = await store.admitRun({ run: newRun(tenant), now: at(0) });
        expect(admitted).toMatchObject({ kind: "admitted", run: { status: "queued", leaseOwner: null } });
        await Promise.all(claims);
      } finally {
        await unsubscribe();
      }
    });

    it("tells every subscriber, and one that throws does not fail the call or the others", async () => {
      const store = await makeStore();
      const heard: StoreEvent[] = [];
      const first = await store.subscribe(() => {
        throw new Error("a subscriber's bug");
      });
      const second = await store.subscribe((event) => {
        if (event.kind !== "subscription") heard.push(event);
      });
      try {
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        expect((await store.admitRun({ run: newRun(tenant), now: at(0) })).kind).toBe("admitted");
        expect(heard).toEqual([{ kind: "queued" }]);
      } finally {
        await first();
        await second();
      }
    });
  });
}
