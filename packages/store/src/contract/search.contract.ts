import { describe, expect, it } from "vitest";
import { at, failed, makeTenant, newRun, scopeOf } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

export function searchContract(makeStore: StoreFactory): void {
  describe("search", () => {
    it("pages newest first by keyset, with every filter", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 100 });
      const other = await makeTenant(store, { balance: 100_000_000 });
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const run = newRun(tenant, {
          createdAt: at(1000 * (i + 1)),
          seconds: 1,
          metadata: { batch: i % 2 === 0 ? "even" : "odd" },
          endpoint: i < 5 ? "lab-d/model-d/reference-to-video" : "lab-c/model-c/reference-to-video",
        });
        await store.admitRun({ run, now: run.createdAt });
        ids.push(run.id);
      }
      await store.admitRun({ run: newRun(other, { createdAt: at(3500) }), now: at(3500) });
      await store.completeRun({ runId: ids[1] as string, outcome: failed, now: at(9000) });

      const page1 = await store.searchRuns({ ...scopeOf(tenant), limit: 3 });
      expect(page1.map((r) => r.id)).toEqual([ids[6], ids[5], ids[4]]);
      const last = page1[2];
      if (!last) throw new Error("no page");
      const page2 = await store.searchRuns({
        ...scopeOf(tenant),
        limit: 3,
        after: { createdAt: last.createdAt, id: last.id },
      });
      expect(page2.map((r) => r.id)).toEqual([ids[3], ids[2], ids[1]]);

      const search = (extra: object) =>
        store.searchRuns({ ...scopeOf(tenant), limit: 10, ...extra }).then((runs) => runs.map((r) => r.id));
      expect(await search({ statuses: ["failed"] })).toEqual([ids[1]]);
      expect(await search({ endpoint: "lab-c/model-c/reference-to-video" })).toEqual([ids[6], ids[5]]);
      expect(await search({ metadata: { batch: "odd" } })).toEqual([ids[5], ids[3], ids[1]]);
      expect(await search({ createdAfter: at(3000), createdBefore: at(5000) })).toEqual([ids[3], ids[2]]);
      expect(
        await search({
          statuses: ["queued"],
          metadata: { batch: "even" },
          endpoint: "lab-d/model-d/reference-to-video",
        }),
      ).toEqual([ids[4], ids[2], ids[0]]);
      expect(await search({ metadata: { batch: "none" } })).toEqual([]);
    });

    it("orders runs created in the same millisecond by id, whatever order they were admitted in", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000 });
      const runs = Array.from({ length: 6 }, () => newRun(tenant, { createdAt: at(7) }));
      for (const run of runs) await store.admitRun({ run, now: at(7) }); // random uuids: random id order
      const want = runs
        .map((r) => r.id)
        .sort()
        .reverse();
      const seen: string[] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (let page = 0; page < 4; page++) {
        const found = await store.searchRuns({
          ...scopeOf(tenant),
          limit: 2,
          ...(after ? { after } : {}),
        });
        seen.push(...found.map((r) => r.id));
        const last = found[found.length - 1];
        if (!last) break;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(want);
    });
  });
}
