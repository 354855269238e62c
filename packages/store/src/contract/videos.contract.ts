import { describe, expect, it } from "vitest";
import { at, makeTenant, newRun, scopeOf, succeeded } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const VIDEO = { model: "sora-2", seconds: "4", size: "1280x720", remixedFrom: null };

/** Runs of the `/v1/videos` surface: kept with their video terms, listed both ways, deleted there only. */
export function videosContract(makeStore: StoreFactory): void {
  describe("videos", () => {
    it("keeps a video's terms, lists videos alone both ways by keyset, and deletes one once", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 100 });
      const other = await makeTenant(store, { balance: 100_000_000 });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const run = {
          ...newRun(tenant, { createdAt: at(1000 * (i + 1)) }),
          video: { ...VIDEO, remixedFrom: ids[0] ?? null },
        };
        const admitted = await store.admitRun({ run, now: run.createdAt });
        if (admitted.kind !== "admitted") throw new Error(admitted.kind);
        expect(admitted.run.video).toEqual({ ...run.video, deletedAt: null });
        ids.push(run.id);
      }
      // A plain run between them, and another organization's video: neither is listed.
      await store.admitRun({ run: newRun(tenant, { createdAt: at(2500) }), now: at(2500) });
      const elsewhere = { ...newRun(other, { createdAt: at(2600) }), video: VIDEO };
      await store.admitRun({ run: elsewhere, now: at(2600) });
      await store.completeRun({ runId: ids[0] as string, outcome: succeeded(1_000), now: at(9000) });

      const list = (extra: object) =>
        store
          .searchRuns({ ...scopeOf(tenant), videos: true, limit: 10, ...extra })
          .then((runs) => runs.map((r) => r.id));
      expect(await list({})).toEqual([...ids].reverse());
      expect(await list({ oldestFirst: true })).toEqual(ids);
      expect(
        await list({ oldestFirst: true, after: { createdAt: at(2000), id: ids[1] as string }, limit: 1 }),
      ).toEqual([ids[2]]);
      expect(await list({ after: { createdAt: at(3000), id: ids[2] as string } })).toEqual([ids[1], ids[0]]);
      const [read] = await store.searchRuns({
        ...scopeOf(tenant),
        videos: true,
        limit: 1,
        oldestFirst: true,
      });
      expect(read?.video).toEqual({ ...VIDEO, remixedFrom: null, deletedAt: null });
      expect(read?.status).toBe("succeeded");

      const deleted = await store.deleteVideo(tenant.organizationId, ids[1] as string, at(10_000));
      expect(deleted?.video?.deletedAt).toEqual(at(10_000));
      const again = await store.deleteVideo(tenant.organizationId, ids[1] as string, at(20_000));
      expect(again?.video?.deletedAt).toEqual(at(10_000));
      expect(await list({})).toEqual([ids[3], ids[2], ids[0]]);
      // Still a run: read and searched as any run.
      expect((await store.getRun(tenant.organizationId, ids[1] as string))?.video?.deletedAt).toEqual(
        at(10_000),
      );
      expect((await store.searchRuns({ ...scopeOf(tenant), limit: 10 })).map((r) => r.id)).toContain(ids[1]);
      // Only the organization's own videos, and only videos.
      expect(await store.deleteVideo(other.organizationId, ids[2] as string, at(10_000))).toBeNull();
      const plain = (await store.searchRuns({ ...scopeOf(tenant), limit: 10 })).find((r) => !r.video);
      expect(await store.deleteVideo(tenant.organizationId, plain?.id as string, at(10_000))).toBeNull();
    });

    it("keeps where an organization's video events go", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 0 });
      expect((await store.getOrganization(tenant.organizationId))?.videoWebhookUrl).toBeNull();
      await store.updateOrganization(tenant.organizationId, {
        videoWebhookUrl: "https://hooks.example.com/v",
      });
      expect((await store.getOrganization(tenant.organizationId))?.videoWebhookUrl).toBe(
        "https://hooks.example.com/v",
      );
      await store.updateOrganization(tenant.organizationId, { queueWeight: 2 });
      expect((await store.getOrganization(tenant.organizationId))?.videoWebhookUrl).toBe(
        "https://hooks.example.com/v",
      );
      await store.updateOrganization(tenant.organizationId, { videoWebhookUrl: null });
      expect((await store.getOrganization(tenant.organizationId))?.videoWebhookUrl).toBeNull();
    });
  });
}
