import { describe, expect, it } from "vitest";
import type { StoreEvent } from "../types.js";
import { at, makeTenant, newRun } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** A run's vendor log keeps entries in order; a hook wakes the run's worker; jobs have one owner. */
export function vendorLogContract(makeStore: StoreFactory): void {
  describe("vendor log", () => {
    it("keeps each run's entries in the order added, and announces hooks only", async () => {
      const store = await makeStore();
      const heard: StoreEvent[] = [];
      const unsubscribe = await store.subscribe((event) => {
        if (event.kind !== "subscription") heard.push(event);
      });
      try {
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const run = newRun(tenant);
        const other = newRun(tenant);
        await store.admitRun({ run, now: at(0) });
        await store.admitRun({ run: other, now: at(0) });
        heard.length = 0;
        const base = { runId: run.id, provider: "fal-main" };
        await store.addVendorEvent({
          ...base,
          upstreamId: null,
          kind: "create_unanswered",
          detail: "no answer",
          at: at(1),
        });
        expect(heard).toEqual([]);
        await store.addVendorEvent({ ...base, upstreamId: "req-1", kind: "hook", detail: "OK", at: at(2) });
        expect(heard).toEqual([{ kind: "vendor", runId: run.id }]);
        await store.addVendorEvent({
          ...base,
          upstreamId: "req-1",
          kind: "adopted",
          detail: null,
          at: at(3),
        });
        const log = await store.listVendorEvents(run.id);
        expect(log.map((e) => [e.kind, e.upstreamId, e.detail])).toEqual([
          ["create_unanswered", null, "no answer"],
          ["hook", "req-1", "OK"],
          ["adopted", "req-1", null],
        ]);
        expect(log[1]?.at).toEqual(at(2));
        expect(log[0]?.provider).toBe("fal-main");
        expect(await store.listVendorEvents(other.id)).toEqual([]);
      } finally {
        await unsubscribe();
      }
    });

    it("keeps a hook's payload, read back by job and status word, never listed", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      const hook = { runId: run.id, provider: "gpu-box", upstreamId: run.id, kind: "hook" as const };
      const ended = JSON.stringify({ id: run.id, status: "succeeded", output: "data:video/mp4;base64,AAAA" });
      await store.addVendorEvent({ ...hook, detail: "processing", at: at(1) });
      await store.addVendorEvent({ ...hook, detail: "canceled", at: at(2), payload: '{"first":true}' });
      await store.addVendorEvent({ ...hook, detail: "succeeded", at: at(3), payload: ended });
      await store.addVendorEvent({ ...hook, detail: "canceled", at: at(4), payload: '{"second":true}' });
      const read = (status: string, upstreamId = run.id, provider = "gpu-box") =>
        store.vendorHookPayload({ runId: run.id, provider, upstreamId, status });
      expect(await read("succeeded")).toBe(ended);
      expect(await read("canceled")).toBe('{"second":true}');
      expect(await read("processing")).toBeNull();
      expect(await read("failed")).toBeNull();
      expect(await read("succeeded", "another")).toBeNull();
      expect(await read("succeeded", run.id, "other-box")).toBeNull();
      const log = await store.listVendorEvents(run.id);
      expect(log).toHaveLength(4);
      for (const entry of log) expect(entry).not.toHaveProperty("payload");
    });

    it("finds the run that recorded a vendor job, and no other", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 60_000, now: at(1) });
      const upstream = { provider: "replicate", id: "pred-1", urls: {} };
      expect(await store.findRunByUpstream({ provider: "replicate", upstreamId: "pred-1" })).toBeNull();
      expect(await store.recordUpstream({ runId: run.id, workerId: "w1", upstream })).toBe(true);
      expect(await store.findRunByUpstream({ provider: "replicate", upstreamId: "pred-1" })).toBe(run.id);
      expect(await store.findRunByUpstream({ provider: "fal", upstreamId: "pred-1" })).toBeNull();
      expect(await store.findRunByUpstream({ provider: "replicate", upstreamId: "pred-2" })).toBeNull();
      expect((await store.getRunById(run.id))?.upstream).toEqual(upstream);
      expect(await store.getRunById("run_unknown")).toBeNull();
    });

    it("keeps a processing run's vendor queue position, announcing each change", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.setQueuePosition(run.id, 3, at(0)); // queued, not processing: nothing
      expect((await store.getRunById(run.id))?.queuePosition ?? null).toBeNull();
      await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 60_000, now: at(1) });
      const heard: StoreEvent[] = [];
      const unsubscribe = await store.subscribe((event) => {
        if (event.kind !== "subscription") heard.push(event);
      });
      try {
        await store.setQueuePosition(run.id, 3, at(2));
        await store.setQueuePosition(run.id, 3, at(3));
        expect((await store.getRunById(run.id))?.queuePosition).toBe(3);
        await store.setQueuePosition(run.id, null, at(4));
        expect((await store.getRunById(run.id))?.queuePosition).toBeNull();
        expect(heard).toEqual([
          { kind: "changed", runIds: [run.id] },
          { kind: "changed", runIds: [run.id] },
        ]);
      } finally {
        await unsubscribe();
      }
    });
  });
}
