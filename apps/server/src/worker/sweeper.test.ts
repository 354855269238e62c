/**
 * The sweeper on a MemoryStore and a ManualClock: queued runs past their deadline end as
 * `timeout`; runs whose worker stopped heartbeating go back to the queue, and fail uncharged once
 * they have been claimed `maxAttempts` times.
 */
import { runErrors } from "@refvid/core";
import { afterEach, describe, expect, it } from "vitest";
import { type LoopHarness, loopHarness } from "../../test/loop-harness.js";
import { Sweeper } from "./sweeper.js";

const LEASE_MS = 30_000;
const harnesses: LoopHarness[] = [];
const sweepers: Sweeper[] = [];

afterEach(async () => {
  for (const sweeper of sweepers.splice(0)) await sweeper.stop();
  for (const h of harnesses.splice(0)) await h.close();
});

async function setup(env: Record<string, string> = {}) {
  const h = await loopHarness(env);
  harnesses.push(h);
  const sweeper = new Sweeper(h.deps, { intervalMs: 1000, maxAttempts: 3 });
  sweepers.push(sweeper);
  const claim = () =>
    h.store.claimRuns({ workerId: "gone", limit: 1, leaseMs: LEASE_MS, now: h.clock.now() });
  const wallet = async () => {
    const org = await h.store.getOrganization(h.organizationId);
    return { reserved: org?.reserved, inFlight: org?.inFlight, balance: org?.balance };
  };
  return { ...h, sweeper, claim, wallet };
}

describe("the sweeper", () => {
  it("ends a queued run as timeout, uncharged, once its deadline has passed", async () => {
    const { sweeper, clock, admit, runOf, ended, wallet } = await setup({ REFVID_RUN_TIMEOUT_MS: "60000" });
    const before = await wallet();
    const id = await admit();
    const end = ended(id);
    sweeper.start();
    await clock.advance(59_000);
    expect((await runOf(id))?.status).toBe("queued");
    await clock.advance(2_000);
    await end;
    expect(await runOf(id)).toMatchObject({
      status: "timeout",
      error: runErrors.timeout(60_000),
      charged: 0,
    });
    expect(await wallet()).toEqual({ ...before, reserved: 0, inFlight: 0 });
  });

  it("puts a run back in the queue once its lease has expired, and wakes the workers", async () => {
    const { sweeper, clock, admit, runOf, claim, deps } = await setup();
    const id = await admit();
    expect(await claim()).toHaveLength(1);
    let queued = 0;
    deps.events.on("queued", () => queued++);
    sweeper.start();
    await clock.advance(LEASE_MS - 1000);
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "gone" });
    expect(queued).toBe(0);
    await clock.advance(1000);
    expect(await runOf(id)).toMatchObject({ status: "queued", leaseOwner: null, attempts: 1 });
    expect(queued).toBe(1);
  });

  it("fails a run uncharged after its third lost lease, and stops any local work on it", async () => {
    const { sweeper, clock, admit, runOf, claim, ended, wallet, deps } = await setup();
    const before = await wallet();
    const id = await admit();
    let stopRequested = false;
    deps.events.onCancelRequested(id, () => {
      stopRequested = true;
    });
    sweeper.start();
    for (let attempt = 1; attempt <= 2; attempt++) {
      expect(await claim()).toHaveLength(1);
      await clock.advance(LEASE_MS);
      expect(await runOf(id)).toMatchObject({ status: "queued", attempts: attempt });
    }
    expect(await claim()).toHaveLength(1);
    const end = ended(id);
    await clock.advance(LEASE_MS);
    await end;
    expect(stopRequested).toBe(true);
    expect(await runOf(id)).toMatchObject({
      status: "failed",
      attempts: 3,
      charged: 0,
      error: runErrors.internal("The run's worker stopped repeatedly; it was not charged."),
    });
    expect(await wallet()).toEqual({ ...before, reserved: 0, inFlight: 0 });
  });

  it("does nothing to runs that are in time and held", async () => {
    const { sweeper, clock, admit, runOf, claim } = await setup({ REFVID_RUN_TIMEOUT_MS: "600000" });
    const held = await admit();
    const waiting = await admit();
    await claim(); // the oldest: `held`
    sweeper.start();
    await clock.advance(LEASE_MS - 1);
    expect(await runOf(held)).toMatchObject({ status: "processing", leaseOwner: "gone" });
    expect((await runOf(waiting))?.status).toBe("queued");
  });
});
