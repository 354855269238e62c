import type { PriceUnit } from "@refvid/core";
import { describe, expect, it } from "vitest";
import type { RunRecord, Store } from "../types.js";
import { at, failed, makeTenant, newRun, scopeOf, succeeded, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const HOUR = 3_600_000;

/** The run's price as every read gives it: its own, its key's search, the operators' search. */
async function pricesRead(store: Store, tenant: Tenant, runId: string) {
  const pick = (run: RunRecord | null | undefined) =>
    run && { priceUnit: run.priceUnit, unitPrice: run.unitPrice, reserved: run.reserved };
  const [own] = await store.searchRuns({ ...scopeOf(tenant), limit: 1 });
  const [all] = await store.searchAllRuns({ organizationId: tenant.organizationId, limit: 1 });
  const one = await store.getRun(tenant.organizationId, runId);
  expect(pick(own)).toEqual(pick(one));
  expect(pick(all)).toEqual(pick(one));
  return pick(one);
}

export function priceUnitContract(makeStore: StoreFactory): void {
  describe("the price unit of a run", () => {
    // [unit, unit price, seconds reserved, what admission holds]
    it.each<[PriceUnit, number, number, number]>([
      ["second", 100_000, 5, 500_000],
      ["run", 1_250_000, 15, 1_250_000],
    ])(
      "keeps %s as admitted, through claim and end, and holds what admission reserved",
      async (priceUnit, unitPrice, seconds, reserved) => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const run = newRun(tenant, { priceUnit, unitPrice, seconds });
        const want = { priceUnit, unitPrice, reserved };

        const admitted = await store.admitRun({ run, now: run.createdAt });
        expect(admitted).toMatchObject({ kind: "admitted", run: { ...want, reservedSeconds: seconds } });
        expect(await pricesRead(store, tenant, run.id)).toEqual(want);
        expect(await store.getOrganization(tenant.organizationId)).toMatchObject({ reserved });

        const [claimed] = await store.claimRuns({
          workerId: "w",
          limit: 1,
          leaseMs: HOUR,
          now: run.createdAt,
        });
        expect(claimed).toMatchObject(want);

        const done = await store.completeRun({
          runId: run.id,
          outcome: succeeded(reserved, 3),
          now: at(HOUR),
          leaseOwner: "w",
        });
        expect(done).toMatchObject({
          kind: "completed",
          run: { ...want, charged: reserved, billableSeconds: 3 },
        });
        expect(await pricesRead(store, tenant, run.id)).toEqual(want);
        expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
          balance: 10_000_000 - reserved,
          reserved: 0,
          totalSpent: reserved,
        });
      },
    );

    it("releases a per-run reservation whole when the run fails", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant, { priceUnit: "run", unitPrice: 1_250_000, seconds: 15 });
      await store.admitRun({ run, now: run.createdAt });
      const done = await store.completeRun({ runId: run.id, outcome: failed, now: at(HOUR) });
      expect(done).toMatchObject({
        kind: "completed",
        run: { priceUnit: "run", charged: 0, billableSeconds: 0 },
      });
      expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
        balance: 10_000_000,
        reserved: 0,
        totalSpent: 0,
      });
    });
  });
}
