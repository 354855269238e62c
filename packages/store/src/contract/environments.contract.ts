import { runErrors } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { addKey, at, makeTenant, newRun, scopeOf, succeeded } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** Live and test keys of one organization are two worlds (docs/decisions.md, "Test keys"). */
export function environmentsContract(makeStore: StoreFactory): void {
  describe("live and test environments", () => {
    it("admits a test run with an empty wallet, bills it on the run and never touches the wallet", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 1_000_000 });
      const test = await addKey(store, live.organizationId, { environment: "test" });
      const before = await store.getOrganization(live.organizationId);

      const run = newRun(test, { unitPrice: 100_000, seconds: 50 }); // 5.00 USD, more than the wallet holds
      const admitted = await store.admitRun({ run, now: at(1) });
      if (admitted.kind !== "admitted") throw new Error(`not admitted: ${JSON.stringify(admitted)}`);
      expect(admitted.run).toMatchObject({ environment: "test", reserved: 5_000_000 });
      expect(await store.getOrganization(live.organizationId)).toMatchObject({
        balance: before?.balance,
        reserved: 0,
        inFlight: 0,
        testInFlight: 1,
      });

      const ended = await store.completeRun({ runId: run.id, outcome: succeeded(3_000_000, 30), now: at(2) });
      expect(ended).toMatchObject({ kind: "completed", run: { charged: 3_000_000, billableSeconds: 30 } });
      expect(await store.getOrganization(live.organizationId)).toMatchObject({
        balance: 1_000_000,
        reserved: 0,
        totalSpent: 0,
        inFlight: 0,
        testInFlight: 0,
      });
    });

    it("counts test runs against the organization's cap apart from live runs", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 10 });
      const test = await addKey(store, live.organizationId, { environment: "test", maxConcurrency: 10 });
      const test2 = await addKey(store, live.organizationId, { environment: "test", maxConcurrency: 10 });
      // The starter tier's cap is 10: fill it with live runs, then test runs still go in.
      for (let i = 0; i < 10; i++) {
        expect((await store.admitRun({ run: newRun(live, { seconds: 1 }), now: at(i) })).kind).toBe(
          "admitted",
        );
      }
      expect(await store.admitRun({ run: newRun(live, { seconds: 1 }), now: at(20) })).toMatchObject({
        kind: "rejected",
        decision: { reason: "api_key" },
      });
      for (let i = 0; i < 10; i++) {
        const key = i < 5 ? test : test2;
        expect((await store.admitRun({ run: newRun(key, { seconds: 1 }), now: at(30 + i) })).kind).toBe(
          "admitted",
        );
      }
      const third = await addKey(store, live.organizationId, { environment: "test" });
      expect(await store.admitRun({ run: newRun(third, { seconds: 1 }), now: at(50) })).toMatchObject({
        kind: "rejected",
        decision: { reason: "organization", limit: 10, inFlight: 10 },
      });
      expect(await store.getOrganization(live.organizationId)).toMatchObject({
        inFlight: 10,
        testInFlight: 10,
        reserved: 10 * 100_000,
      });
    });

    it("keeps each environment's runs out of the other's searches and cancels", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 10_000_000 });
      const test = await addKey(store, live.organizationId, { environment: "test" });
      const liveRun = newRun(live, { createdAt: at(1) });
      const testRun = newRun(test, { createdAt: at(2) });
      await store.admitRun({ run: liveRun, now: at(1) });
      await store.admitRun({ run: testRun, now: at(2) });

      const ids = async (tenant: typeof live) =>
        (await store.searchRuns({ ...scopeOf(tenant), limit: 10 })).map((r) => r.id);
      expect(await ids(live)).toEqual([liveRun.id]);
      expect(await ids(test)).toEqual([testRun.id]);
      for (const [run, other] of [
        [liveRun, test],
        [testRun, live],
      ] as const) {
        const cancel = { status: "cancelled", error: runErrors.cancelled() } as const;
        expect(
          await store.completeRun({ runId: run.id, outcome: cancel, now: at(3), ...scopeOf(other) }),
        ).toEqual({ kind: "not_found" });
      }
      expect((await store.getRun(live.organizationId, liveRun.id))?.status).toBe("queued");
      expect((await store.getRun(live.organizationId, testRun.id))?.status).toBe("queued");
    });
  });
}
