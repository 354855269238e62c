import { describe, expect, it } from "vitest";
import type { RunOutcome, Store, UsageGroupBy, UsageRow } from "../types.js";
import { addKey, at, failed, makeTenant, newRun, succeeded, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const HOUR = 3_600_000;
const C = "lab-c/model-c/reference-to-video";
const D = "lab-d/model-d/reference-to-video";
const timedOut = { status: "timeout", error: { type: "timeout", code: 504, message: "too slow" } } as const;
const cancelled = {
  status: "cancelled",
  error: { type: "cancelled", code: 499, message: "cancelled" },
} as const;

/** One run made, taken by a worker when it gets a provider or must succeed, and ended when it has an outcome. */
async function run(
  store: Store,
  tenant: Tenant,
  ms: number,
  options: { endpoint?: typeof C | typeof D; provider?: string; outcome?: RunOutcome; claim?: boolean } = {},
): Promise<void> {
  const made = newRun(tenant, { createdAt: at(ms), endpoint: options.endpoint ?? D });
  await store.admitRun({ run: made, now: made.createdAt });
  if (options.claim || options.provider || options.outcome?.status === "succeeded") {
    const [claimed] = await store.claimRuns({ workerId: "w", limit: 1, leaseMs: HOUR, now: made.createdAt });
    expect(claimed?.id).toBe(made.id);
    if (options.provider)
      await store.acquireProvider({ runId: made.id, workerId: "w", provider: options.provider });
  }
  if (options.outcome)
    await store.completeRun({ runId: made.id, outcome: options.outcome, now: at(ms + 500) });
}

/** A usage row as a hand count states it: statuses not named are 0. */
const row = (
  group: string,
  environment: "live" | "test",
  runs: Partial<UsageRow["runs"]>,
  billableSeconds: number,
  charged: number,
  vendorCost = 0,
): UsageRow => ({
  group,
  environment,
  runs: { queued: 0, processing: 0, succeeded: 0, failed: 0, timeout: 0, cancelled: 0, ...runs },
  billableSeconds,
  charged,
  vendorCost,
});

export function usageContract(makeStore: StoreFactory): void {
  describe("usage", () => {
    it("adds up the runs created in [from, to) by key, model, provider and UTC day, as counted by hand", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 100_000_000 });
      const a2 = await addKey(store, a.organizationId);
      const test = await addKey(store, a.organizationId, { environment: "test" });
      const b = await makeTenant(store, { balance: 100_000_000 });
      // T0 is 10:00 UTC; the window is [T0 + 1 s, T0 + 20 h), 15 h is 01:00 the next day.
      const from = at(1000);
      const to = at(20 * HOUR);
      await run(store, a, 1000, { outcome: succeeded(500_000, 5) }); // exactly at `from`: counted
      await run(store, a, 2000, { outcome: failed });
      await run(store, a, 3000, { endpoint: C, provider: "fal", outcome: succeeded(400_000, 4) });
      await run(store, a2, 4000, { outcome: timedOut });
      await run(store, test, 5000, { outcome: succeeded(500_000, 5) }); // priced, never charged
      await run(store, test, 6000, { outcome: failed });
      await run(store, b, 7000, { outcome: succeeded(300_000, 3) });
      await run(store, a, 8000, { outcome: cancelled });
      await run(store, a, 9000, { provider: "replicate" }); // still processing
      await run(store, a, -1000, { outcome: succeeded(500_000, 5) }); // before the window
      await run(store, a, 20 * HOUR, { outcome: succeeded(500_000, 5) }); // exactly at `to`: not counted
      await run(store, a, 15 * HOUR); // still queued, on 2026-11-23

      const usage = (groupBy: "api_key" | "model" | "provider" | "day", organizationId?: string) =>
        store.usage({ from, to, groupBy, ...(organizationId ? { organizationId } : {}) });
      const byKey = [
        row(
          a.apiKeyId,
          "live",
          { queued: 1, processing: 1, succeeded: 2, failed: 1, cancelled: 1 },
          9,
          900_000,
        ),
        row(a2.apiKeyId, "live", { timeout: 1 }, 0, 0),
        row(test.apiKeyId, "test", { succeeded: 1, failed: 1 }, 5, 500_000),
        row(b.apiKeyId, "live", { succeeded: 1 }, 3, 300_000),
      ].sort((x, y) => (x.group < y.group ? -1 : 1));
      expect(await usage("api_key")).toEqual(byKey);
      expect(await usage("api_key", a.organizationId)).toEqual(byKey.filter((r) => r.group !== b.apiKeyId));
      expect(await usage("model")).toEqual([
        row(C, "live", { succeeded: 1 }, 4, 400_000),
        row(
          D,
          "live",
          { queued: 1, processing: 1, succeeded: 2, failed: 1, timeout: 1, cancelled: 1 },
          8,
          800_000,
        ),
        row(D, "test", { succeeded: 1, failed: 1 }, 5, 500_000),
      ]);
      expect(await usage("provider")).toEqual([
        row("fal", "live", { succeeded: 1 }, 4, 400_000),
        row("replicate", "live", { processing: 1 }, 0, 0),
        row(
          "unassigned",
          "live",
          { queued: 1, succeeded: 2, failed: 1, timeout: 1, cancelled: 1 },
          8,
          800_000,
        ),
        row("unassigned", "test", { succeeded: 1, failed: 1 }, 5, 500_000),
      ]);
      expect(await usage("day")).toEqual([
        row(
          "2026-11-22",
          "live",
          { processing: 1, succeeded: 3, failed: 1, timeout: 1, cancelled: 1 },
          12,
          1_200_000,
        ),
        row("2026-11-22", "test", { succeeded: 1, failed: 1 }, 5, 500_000),
        row("2026-11-23", "live", { queued: 1 }, 0, 0),
      ]);
      expect(await usage("day", b.organizationId)).toEqual([
        row("2026-11-22", "live", { succeeded: 1 }, 3, 300_000),
      ]);
      expect(await store.usage({ from: at(2 * HOUR), to: at(3 * HOUR), groupBy: "model" })).toEqual([]);
      expect(await usage("model", "org_nope")).toEqual([]);
    });

    it("adds vendor cost up by route, model and organization: every margin is its runs' charges minus their costs", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 100_000_000 });
      const test = await addKey(store, a.organizationId, { environment: "test" });
      const b = await makeTenant(store, { balance: 100_000_000 });
      const paid = (charged: number, seconds: number, route?: string, vendorCost?: number): RunOutcome => ({
        ...succeeded(charged, seconds),
        ...(route === undefined ? {} : { route }),
        ...(vendorCost === undefined ? {} : { vendorCost }),
      });
      await run(store, a, 1000, { outcome: paid(500_000, 5, "fal-d", 302_400) });
      await run(store, a, 2000, { outcome: paid(400_000, 4, "fal-d", 450_000) }); // a loss
      await run(store, a, 3000, { endpoint: C, outcome: paid(200_000, 2, "replicate-c", 120_000) });
      await run(store, a, 4000, { outcome: { ...failed, route: "replicate-d" } });
      await run(store, a, 5000, { outcome: paid(300_000, 3) }); // no route or cost reported
      await run(store, test, 6000, { outcome: paid(500_000, 5) });
      await run(store, b, 7000, { outcome: paid(300_000, 3, "fal-d", 181_440) });
      await run(store, b, 8000, { endpoint: C, outcome: { ...timedOut, route: "replicate-c" } });
      await run(store, a, 9000, { claim: true }); // still processing

      const usage = (groupBy: UsageGroupBy, organizationId?: string) =>
        store.usage({ from: at(0), to: at(HOUR), groupBy, ...(organizationId ? { organizationId } : {}) });
      expect(await usage("route")).toEqual([
        row("fal-d", "live", { succeeded: 3 }, 12, 1_200_000, 933_840),
        row("replicate-c", "live", { succeeded: 1, timeout: 1 }, 2, 200_000, 120_000),
        row("replicate-d", "live", { failed: 1 }, 0, 0, 0),
        row("unassigned", "live", { succeeded: 1, processing: 1 }, 3, 300_000, 0),
        row("unassigned", "test", { succeeded: 1 }, 5, 500_000, 0),
      ]);
      expect(await usage("model")).toEqual([
        row(C, "live", { succeeded: 1, timeout: 1 }, 2, 200_000, 120_000),
        row(D, "live", { succeeded: 4, failed: 1, processing: 1 }, 15, 1_500_000, 933_840),
        row(D, "test", { succeeded: 1 }, 5, 500_000, 0),
      ]);
      const byOrganization = [
        row(a.organizationId, "live", { succeeded: 4, failed: 1, processing: 1 }, 14, 1_400_000, 872_400),
        row(a.organizationId, "test", { succeeded: 1 }, 5, 500_000, 0),
        row(b.organizationId, "live", { succeeded: 1, timeout: 1 }, 3, 300_000, 181_440),
      ].sort((x, y) => (x.group < y.group ? -1 : x.group > y.group ? 1 : 0));
      expect(await usage("organization")).toEqual(byOrganization);
      expect(await usage("organization", b.organizationId)).toEqual([
        row(b.organizationId, "live", { succeeded: 1, timeout: 1 }, 3, 300_000, 181_440),
      ]);

      // Run by run: a route's margin is the sum of its runs' charge minus vendor cost (none counts 0).
      const runs = await store.searchAllRuns({ limit: 100 });
      expect(runs).toHaveLength(9);
      const margin = (charged: number | null, vendorCost: number | null) =>
        (charged ?? 0) - (vendorCost ?? 0);
      const byRoute = new Map<string, number>();
      for (const r of runs) {
        const group = `${r.route ?? "unassigned"} ${r.environment}`;
        byRoute.set(group, (byRoute.get(group) ?? 0) + margin(r.charged, r.vendorCost));
      }
      const routes = await usage("route");
      expect(
        new Map(routes.map((r) => [`${r.group} ${r.environment}`, margin(r.charged, r.vendorCost)])),
      ).toEqual(byRoute);
      expect(routes.find((r) => r.group === "fal-d")).toMatchObject({
        charged: 1_200_000,
        vendorCost: 933_840,
      });
      // Every grouping splits the same runs: the margins add up to the same whole.
      const whole = runs.reduce((sum, r) => sum + margin(r.charged, r.vendorCost), 0);
      expect(whole).toBe(2_200_000 - 1_053_840);
      for (const groupBy of ["api_key", "model", "provider", "route", "organization", "day"] as const) {
        const rows = await usage(groupBy);
        expect(
          rows.reduce((sum, r) => sum + margin(r.charged, r.vendorCost), 0),
          groupBy,
        ).toBe(whole);
      }
    });
  });
}
