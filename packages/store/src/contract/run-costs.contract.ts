import { describe, expect, it } from "vitest";
import type { RunOutcome, RunRecord, Store } from "../types.js";
import { at, failed, makeTenant, newRun, scopeOf, succeeded, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const HOUR = 3_600_000;
const cancelled = {
  status: "cancelled",
  error: { type: "cancelled", code: 499, message: "cancelled" },
} as const;
const timedOut = { status: "timeout", error: { type: "timeout", code: 504, message: "too slow" } } as const;

/** A run admitted and taken by worker `w`, ready to end. */
async function processingRun(store: Store, tenant: Tenant) {
  const run = newRun(tenant, { unitPrice: 100_000, seconds: 5 });
  await store.admitRun({ run, now: run.createdAt });
  await store.claimRuns({ workerId: "w", limit: 1, leaseMs: HOUR, now: run.createdAt });
  return run;
}

/** Every read of a run gives the same route and vendor cost: the run, its key's search and the operators'. */
async function readBack(store: Store, tenant: Tenant, runId: string) {
  const [own] = await store.searchRuns({ ...scopeOf(tenant), limit: 1 });
  const [all] = await store.searchAllRuns({ organizationId: tenant.organizationId, limit: 1 });
  const one = await store.getRun(tenant.organizationId, runId);
  expect(own?.id).toBe(runId);
  expect(all?.id).toBe(runId);
  const pick = (run: RunRecord | null | undefined) => ({ route: run?.route, vendorCost: run?.vendorCost });
  expect(pick(own)).toEqual(pick(one));
  expect(pick(all)).toEqual(pick(one));
  return pick(one);
}

export function runCostsContract(makeStore: StoreFactory): void {
  describe("the route and vendor cost of a run", () => {
    it("keeps none while the run is in flight", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = await processingRun(store, tenant);
      expect(await readBack(store, tenant, run.id)).toEqual({ route: null, vendorCost: null });
    });

    it.each<[string, RunOutcome, { route: string | null; vendorCost: number | null }]>([
      [
        "a success with its route and cost",
        { ...succeeded(300_000, 3), route: "fal-seedance", vendorCost: 181_440 },
        { route: "fal-seedance", vendorCost: 181_440 },
      ],
      [
        "a success that cost more than it was charged",
        { ...succeeded(300_000, 3), route: "fal-seedance", vendorCost: 450_000 },
        { route: "fal-seedance", vendorCost: 450_000 },
      ],
      [
        "a success that cost the vendor nothing",
        { ...succeeded(300_000, 3), route: "gpu-box", vendorCost: 0 },
        { route: "gpu-box", vendorCost: 0 },
      ],
      ["a success that reported neither", succeeded(300_000, 3), { route: null, vendorCost: null }],
      ["a failure on a route", { ...failed, route: "replicate" }, { route: "replicate", vendorCost: null }],
      ["a timeout on a route", { ...timedOut, route: "fal" }, { route: "fal", vendorCost: null }],
      ["a cancel", cancelled, { route: null, vendorCost: null }],
    ])("records what the end reports: %s", async (_name, outcome, want) => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = await processingRun(store, tenant);
      const done = await store.completeRun({ runId: run.id, outcome, now: at(HOUR), leaseOwner: "w" });
      expect(done).toMatchObject({ kind: "completed", run: want });
      expect(await readBack(store, tenant, run.id)).toEqual(want);
    });

    it("keeps the first end's route and cost: a later or racing end, or a lost lease, changes nothing", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = await processingRun(store, tenant);
      const outcomes: RunOutcome[] = [
        { ...succeeded(300_000, 3), route: "a", vendorCost: 100_000 },
        { ...succeeded(300_000, 3), route: "b", vendorCost: 200_000 },
        { ...failed, route: "c" },
        { ...cancelled, route: "d" },
      ];
      const lost = await store.completeRun({
        runId: run.id,
        outcome: { ...succeeded(300_000, 3), route: "e", vendorCost: 1 },
        now: at(HOUR),
        leaseOwner: "someone else",
      });
      expect(lost.kind).toBe("lease_lost");
      const results = await Promise.all(
        outcomes.map((outcome, i) => store.completeRun({ runId: run.id, outcome, now: at(HOUR + i) })),
      );
      const winner = results.findIndex((r) => r.kind === "completed");
      expect(results.filter((r) => r.kind === "already_terminal")).toHaveLength(outcomes.length - 1);
      const outcome = outcomes[winner] as RunOutcome;
      const want = {
        route: outcome.route ?? null,
        vendorCost: outcome.status === "succeeded" ? (outcome.vendorCost ?? null) : null,
      };
      expect(await readBack(store, tenant, run.id)).toEqual(want);
      const again = await store.completeRun({
        runId: run.id,
        outcome: { ...succeeded(300_000, 3), route: "f", vendorCost: 9 },
        now: at(2 * HOUR),
      });
      expect(again).toMatchObject({ kind: "already_terminal", run: want });
      expect(await readBack(store, tenant, run.id)).toEqual(want);
    });

    it.each([
      ["negative", -1],
      ["a fraction of a micro-USD", 1.5],
    ])(
      "refuses a vendor cost that is %s, and the run stays in flight, its money held",
      async (_name, cost) => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const run = await processingRun(store, tenant);
        await expect(
          store.completeRun({
            runId: run.id,
            outcome: { ...succeeded(300_000, 3), route: "fal", vendorCost: cost },
            now: at(HOUR),
          }),
        ).rejects.toThrow(RangeError);
        expect(await store.getRun(tenant.organizationId, run.id)).toMatchObject({
          status: "processing",
          route: null,
          vendorCost: null,
        });
        expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
          reserved: 500_000,
          inFlight: 1,
        });
        const done = await store.completeRun({
          runId: run.id,
          outcome: succeeded(300_000, 3),
          now: at(HOUR),
        });
        expect(done.kind).toBe("completed");
      },
    );
  });
}
