import { describe, expect, it } from "vitest";
import type { RunOutcome } from "../types.js";
import { at, failed, makeTenant, newRun, succeeded } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const cancelled = {
  status: "cancelled",
  error: { type: "cancelled", code: 499, message: "cancelled" },
} as const;
const timedOut = { status: "timeout", error: { type: "timeout", code: 504, message: "too slow" } } as const;

export function lifecycleContract(makeStore: StoreFactory): void {
  describe("run lifecycle", () => {
    it("claims queued runs oldest first under a lease, once", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const runs = [
        newRun(tenant, { createdAt: at(1) }),
        newRun(tenant, { createdAt: at(2) }),
        newRun(tenant, { createdAt: at(3) }),
      ];
      for (const run of runs) await store.admitRun({ run, now: run.createdAt });
      const claimed = await store.claimRuns({ workerId: "w1", limit: 2, leaseMs: 30_000, now: at(10) });
      expect(claimed.map((r) => r.id)).toEqual([runs[0]?.id, runs[1]?.id]);
      expect(claimed[0]).toMatchObject({
        status: "processing",
        startedAt: at(10),
        leaseOwner: "w1",
        leaseExpiresAt: at(30_010),
        attempts: 1,
      });
      const rest = await store.claimRuns({ workerId: "w2", limit: 5, leaseMs: 30_000, now: at(11) });
      expect(rest.map((r) => r.id)).toEqual([runs[2]?.id]);
      expect(await store.claimRuns({ workerId: "w3", limit: 5, leaseMs: 30_000, now: at(12) })).toEqual([]);
    });

    it("hands each queued run to exactly one of several racing claimers", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000 });
      for (let i = 0; i < 8; i++) await store.admitRun({ run: newRun(tenant, { seconds: 1 }), now: at(i) });
      const batches = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          store.claimRuns({ workerId: `w${i}`, limit: 3, leaseMs: 1000, now: at(100) }),
        ),
      );
      const ids = batches.flat().map((r) => r.id);
      expect(ids).toHaveLength(8);
      expect(new Set(ids).size).toBe(8);
    });

    it("renews a lease only for its owner while processing, and records progress", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 1000, now: at(1) });
      expect(await store.renewLease({ runId: run.id, workerId: "w1", leaseMs: 1000, now: at(500) })).toBe(
        true,
      );
      expect(await store.renewLease({ runId: run.id, workerId: "w2", leaseMs: 1000, now: at(500) })).toBe(
        false,
      );
      await store.setProgress(run.id, 0.5, at(500));
      expect((await store.getRun(tenant.organizationId, run.id))?.progress).toBe(0.5);
      await store.completeRun({ runId: run.id, outcome: failed, now: at(600) });
      expect(await store.renewLease({ runId: run.id, workerId: "w1", leaseMs: 1000, now: at(700) })).toBe(
        false,
      );
    });

    it("settles a success: charges what was delivered, releases the rest, frees both slots", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { unitPrice: 100_000, seconds: 30 });
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "w", limit: 1, leaseMs: 1000, now: at(1) });
      const done = await store.completeRun({
        runId: run.id,
        outcome: succeeded(1_200_000, 12),
        now: at(2000),
      });
      expect(done).toMatchObject({
        kind: "completed",
        run: {
          status: "succeeded",
          charged: 1_200_000,
          billableSeconds: 12,
          progress: 1,
          completedAt: at(2000),
          error: null,
        },
      });
      expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
        balance: 8_800_000,
        reserved: 0,
        totalSpent: 1_200_000,
        inFlight: 0,
      });
      expect((await store.getApiKey(tenant.apiKeyId))?.inFlight).toBe(0);
    });

    it("keeps a success's output as written, its poster and sprite sheet included", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const plain = newRun(tenant);
      const previewed = newRun(tenant);
      const outcome = succeeded(500_000);
      const output = {
        ...outcome.output,
        thumbnailFileId: "file_poster01",
        spritesheetFileId: "file_sprite01",
      };
      for (const run of [plain, previewed]) await store.admitRun({ run, now: at(0) });
      await store.completeRun({ runId: plain.id, outcome, now: at(5) });
      await store.completeRun({ runId: previewed.id, outcome: { ...outcome, output }, now: at(5) });
      expect((await store.getRun(tenant.organizationId, plain.id))?.output).toStrictEqual(outcome.output);
      expect((await store.getRun(tenant.organizationId, previewed.id))?.output).toStrictEqual(output);
    });

    it.each<[string, RunOutcome]>([
      ["failed", failed],
      ["cancelled", cancelled],
      ["timeout", timedOut],
    ])("charges nothing for a %s run and releases its reservation", async (status, outcome) => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { unitPrice: 100_000, seconds: 10 });
      await store.admitRun({ run, now: at(0) });
      const done = await store.completeRun({ runId: run.id, outcome, now: at(5) });
      expect(done).toMatchObject({
        kind: "completed",
        run: {
          status,
          charged: 0,
          billableSeconds: 0,
          output: null,
          error: outcome.status === "succeeded" ? null : outcome.error,
        },
      });
      expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
        balance: 10_000_000,
        reserved: 0,
        totalSpent: 0,
        inFlight: 0,
      });
    });

    it("ends a run exactly once, even when endings race", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { unitPrice: 100_000, seconds: 5 });
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "w", limit: 1, leaseMs: 1000, now: at(1) });
      const outcomes = [succeeded(500_000), failed, cancelled, timedOut, succeeded(500_000)];
      const results = await Promise.all(
        outcomes.map((outcome, i) => store.completeRun({ runId: run.id, outcome, now: at(10 + i) })),
      );
      expect(results.filter((r) => r.kind === "completed")).toHaveLength(1);
      expect(results.filter((r) => r.kind === "already_terminal")).toHaveLength(4);
      const org = await store.getOrganization(tenant.organizationId);
      expect(org?.reserved).toBe(0);
      expect(org?.inFlight).toBe(0);
      expect([10_000_000, 9_500_000]).toContain(org?.balance);
    });

    it("never charges more than was reserved", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { unitPrice: 100_000, seconds: 5 });
      await store.admitRun({ run, now: at(0) });
      const done = await store.completeRun({ runId: run.id, outcome: succeeded(9_000_000, 90), now: at(1) });
      expect(done.kind === "completed" && done.run.charged).toBe(500_000);
    });

    it("scopes a cancel to the organization", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 10_000_000 });
      const b = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(a);
      await store.admitRun({ run, now: at(0) });
      expect(
        await store.completeRun({
          runId: run.id,
          outcome: cancelled,
          now: at(1),
          organizationId: b.organizationId,
        }),
      ).toEqual({ kind: "not_found" });
      expect(await store.getRun(b.organizationId, run.id)).toBeNull();
      expect(
        (
          await store.completeRun({
            runId: run.id,
            outcome: cancelled,
            now: at(2),
            organizationId: a.organizationId,
          })
        ).kind,
      ).toBe("completed");
      expect(await store.completeRun({ runId: "run_missing", outcome: cancelled, now: at(3) })).toEqual({
        kind: "not_found",
      });
    });

    it("does not hand out a run cancelled while queued", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.completeRun({ runId: run.id, outcome: cancelled, now: at(1) });
      expect(await store.claimRuns({ workerId: "w", limit: 5, leaseMs: 1000, now: at(2) })).toEqual([]);
    });

    it("lets only the lease holder end a run it is processing", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "stalled", limit: 1, leaseMs: 1000, now: at(1) });
      await store.requeueExpiredLeases({ now: at(2000), maxAttempts: 3, limit: 10 });
      await store.claimRuns({ workerId: "healthy", limit: 1, leaseMs: 1000, now: at(2001) });
      const stale = await store.completeRun({
        runId: run.id,
        outcome: failed,
        now: at(2002),
        leaseOwner: "stalled",
      });
      expect(stale).toMatchObject({
        kind: "lease_lost",
        run: { status: "processing", leaseOwner: "healthy" },
      });
      const done = await store.completeRun({
        runId: run.id,
        outcome: succeeded(500_000),
        now: at(2003),
        leaseOwner: "healthy",
      });
      expect(done).toMatchObject({ kind: "completed", run: { status: "succeeded" } });
      expect(await store.getOrganization(tenant.organizationId)).toMatchObject({ inFlight: 0, reserved: 0 });
    });

    it("finds in-flight runs older than a deadline", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const old = newRun(tenant, { createdAt: at(0) });
      const young = newRun(tenant, { createdAt: at(5000) });
      const ended = newRun(tenant, { createdAt: at(1) });
      for (const run of [old, ended, young]) await store.admitRun({ run, now: run.createdAt });
      await store.completeRun({ runId: ended.id, outcome: failed, now: at(2) });
      const overdue = await store.findOverdueRuns({ createdBefore: at(1000), limit: 10 });
      expect(overdue.map((r) => r.id)).toEqual([old.id]);
    });

    it("puts runs whose lease expired back in the queue, and gives up after the last attempt", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "dead", limit: 1, leaseMs: 1000, now: at(1) });
      expect(await store.requeueExpiredLeases({ now: at(500), maxAttempts: 2, limit: 10 })).toEqual({
        requeued: [],
        exhausted: [],
      });
      expect(await store.requeueExpiredLeases({ now: at(1001), maxAttempts: 2, limit: 10 })).toEqual({
        requeued: [run.id],
        exhausted: [],
      });
      const again = await store.claimRuns({ workerId: "w2", limit: 1, leaseMs: 1000, now: at(1100) });
      expect(again[0]).toMatchObject({ id: run.id, attempts: 2, startedAt: at(1) });
      const last = await store.requeueExpiredLeases({ now: at(5000), maxAttempts: 2, limit: 10 });
      expect(last.requeued).toEqual([]);
      expect(last.exhausted.map((r) => r.id)).toEqual([run.id]);
      expect((await store.getOrganization(tenant.organizationId))?.inFlight).toBe(1);
    });
  });
}
