import { queuePosition } from "@refvid/core";
import { describe, expect, it } from "vitest";
import type { RunRecord, Store } from "../types.js";
import { addKey, at, makeTenant, newRun, succeeded, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** Claims one run at a time, as a worker with one free slot would, and names whose it was. */
async function claimOne(store: Store, now: number): Promise<RunRecord | undefined> {
  const [run] = await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 60_000, now: at(now) });
  return run;
}

async function queue(store: Store, tenant: Tenant, count: number, from: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const run = newRun(tenant, { seconds: 1, createdAt: at(from + i) });
    await store.admitRun({ run, now: run.createdAt });
    ids.push(run.id);
  }
  return ids;
}

export function queueContract(makeStore: StoreFactory) {
  describe("fair queue", () => {
    it("takes turns between organizations by runs processing, then by who was served least recently", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 100_000_000 });
      const b = await makeTenant(store, { balance: 100_000_000 });
      await queue(store, a, 4, 0); // a's runs are all older than b's
      await queue(store, b, 2, 100);
      const orgs: string[] = [];
      for (let i = 0; i < 6; i++) orgs.push((await claimOne(store, 1000 + i))?.organizationId as string);
      const first = orgs[0] as string;
      const second = first === a.organizationId ? b.organizationId : a.organizationId;
      // Each claim counts as processing before the next: the organizations alternate while both wait.
      expect(orgs.slice(0, 4)).toEqual([first, second, first, second]);
      expect(orgs.slice(4)).toEqual([a.organizationId, a.organizationId]);
    });

    it("gives an organization of weight 2 two runs for each of a weight-1 organization's", async () => {
      const store = await makeStore();
      const heavy = await makeTenant(store, { balance: 100_000_000 });
      const light = await makeTenant(store, { balance: 100_000_000 });
      expect((await store.updateOrganization(heavy.organizationId, { queueWeight: 2 }))?.queueWeight).toBe(2);
      await queue(store, heavy, 8, 0);
      await queue(store, light, 8, 0);
      const claimed: string[] = [];
      for (let i = 0; i < 9; i++) claimed.push((await claimOne(store, 1000 + i))?.organizationId as string);
      expect(claimed.filter((o) => o === heavy.organizationId)).toHaveLength(6);
    });

    it("starts a high-priority key's runs first within its organization, never before another's share", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 100_000_000 });
      const urgent = await addKey(store, a.organizationId, { priority: "high" });
      expect((await store.getApiKey(urgent.apiKeyId))?.priority).toBe("high");
      const b = await makeTenant(store, { balance: 100_000_000 });
      const normal = await queue(store, a, 3, 0);
      const high = await queue(store, urgent, 2, 50);
      const other = await queue(store, b, 1, 10);
      const order: string[] = [];
      for (let i = 0; i < 6; i++) order.push((await claimOne(store, 1000 + i))?.id as string);
      const ofA = order.filter((id) => !other.includes(id));
      expect(ofA).toEqual([...high, ...normal]);
      // b's only run is among the first two: a's priority did not take b's turn.
      expect(order.slice(0, 2)).toContain(other[0]);
    });

    it("gives a released run's organization its turn back", async () => {
      const store = await makeStore();
      const a = await makeTenant(store, { balance: 100_000_000 });
      const b = await makeTenant(store, { balance: 100_000_000 });
      await queue(store, a, 2, 0);
      await queue(store, b, 2, 0);
      const first = (await claimOne(store, 1000)) as RunRecord;
      const second = (await claimOne(store, 1001)) as RunRecord;
      expect(second.organizationId).not.toBe(first.organizationId);
      // The second's provider was full: its claim is undone, and it keeps its place ahead of the first's.
      expect(await store.releaseRun({ runId: second.id, workerId: "w1" })).toBe(true);
      await store.completeRun({ runId: first.id, outcome: succeeded(100_000, 1), now: at(2000) });
      expect((await claimOne(store, 2001))?.id).toBe(second.id);
    });

    it("says where a queued run stands, counting down as runs start", async () => {
      const store = await makeStore();
      const heavy = await makeTenant(store, { balance: 100_000_000 });
      const light = await makeTenant(store, { balance: 100_000_000 });
      const heavyRuns = await queue(store, heavy, 6, 0);
      await claimOne(store, 100);
      await claimOne(store, 101); // heavy has 2 processing
      const lightRuns = await queue(store, light, 3, 200);
      const positionOf = async (runId: string) => {
        const standing = await store.queueStanding({ runId, arrivalsSince: at(0) });
        if (!standing) return null;
        return queuePosition(standing.own, standing.aheadInOrganization, standing.others);
      };
      // light's runs go first until light too has 2 processing; on the tie, light goes first
      // (heavy was served more recently).
      expect(await Promise.all(lightRuns.map(positionOf))).toEqual([0, 1, 3]);
      expect(await positionOf(heavyRuns[2] as string)).toBe(2);
      const standing = await store.queueStanding({ runId: heavyRuns[3] as string, arrivalsSince: at(0) });
      // light's three runs arrived since: the others' arrivals, the rate at which runs may come ahead.
      expect(standing).toMatchObject({
        aheadInOrganization: 1,
        own: { processing: 2, weight: 1 },
        arrivalsByOthers: { count: 3, earliest: at(200) },
      });
      const later = await store.queueStanding({ runId: heavyRuns[3] as string, arrivalsSince: at(201) });
      expect(later?.arrivalsByOthers).toEqual({ count: 2, earliest: at(201) });
      expect(standing?.runningSince.map((d) => d.getTime()).sort()).toEqual([
        at(100).getTime(),
        at(101).getTime(),
      ]);
      // Each claim takes the run at position 0, and every other position moves down by one.
      const started: (number | null)[] = [];
      const all = [...lightRuns, ...heavyRuns.slice(2)];
      for (let i = 0; i < all.length; i++) {
        const positions = await Promise.all(all.map(positionOf));
        const next = (await claimOne(store, 300 + i)) as RunRecord;
        started.push(positions[all.indexOf(next.id)] ?? null);
      }
      expect(started.every((p) => p === 0)).toBe(true);
      expect(await store.queueStanding({ runId: heavyRuns[0] as string, arrivalsSince: at(0) })).toBeNull();
    });

    it("keeps a window of recent durations per model and route, newest first", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000 });
      await queue(store, tenant, 3, 0);
      for (const [i, ms] of [4000, 6000, 5000].entries()) {
        const run = (await claimOne(store, 10_000 * (i + 1))) as RunRecord;
        await store.completeRun({
          runId: run.id,
          outcome: { ...succeeded(100_000, 1), route: i === 1 ? "b" : "a" },
          now: at(10_000 * (i + 1) + ms),
        });
      }
      const endpoint = "lab-d/model-d/reference-to-video";
      expect(await store.recentDurations({ endpoint, limit: 10 })).toEqual([5000, 6000, 4000]);
      expect(await store.recentDurations({ endpoint, limit: 2 })).toEqual([5000, 6000]);
      expect(await store.recentDurations({ endpoint, route: "a", limit: 10 })).toEqual([5000, 4000]);
    });
  });
}
