import { MemoryStore } from "@refvid/store";
import { at, failed, makeTenant, newRun } from "@refvid/store/testing";
import { describe, expect, it } from "vitest";
import { RunEvents } from "./run-events.js";

describe("RunEvents", () => {
  it("a run's end in the store stops local work on the run and wakes its waiters and the loops", async () => {
    const store = new MemoryStore();
    const events = await RunEvents.from(store);
    const tenant = await makeTenant(store, { balance: 10_000_000 });
    const [a, b] = [newRun(tenant), newRun(tenant)];
    for (const run of [a, b]) await store.admitRun({ run, now: at(0) });
    const heard: string[] = [];
    events.onCancelRequested(a.id, () => heard.push("stop a"));
    events.onCancelRequested(b.id, () => heard.push("stop b"));
    events.onRunEnded(a.id, () => heard.push("ended a"));
    events.on("ended", () => heard.push("ended"));
    await store.completeRun({ runId: a.id, outcome: failed, now: at(1) });
    expect(heard).toEqual(["stop a", "ended a", "ended"]);
    await events.close();
  });

  it("wakes the loops for queued runs and event streams for started ones, until closed", async () => {
    const store = new MemoryStore();
    const events = await RunEvents.from(store);
    const tenant = await makeTenant(store, { balance: 10_000_000 });
    const run = newRun(tenant);
    const heard: string[] = [];
    events.on("queued", () => heard.push("queued"));
    events.onRunChanged(run.id, () => heard.push("changed"));
    await store.admitRun({ run, now: at(0) });
    await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 1000, now: at(1) });
    await store.setProgress(run.id, 0.5, at(2));
    await events.close();
    await store.setProgress(run.id, 0.6, at(3));
    expect(heard).toEqual(["queued", "changed", "changed"]);
  });
});
