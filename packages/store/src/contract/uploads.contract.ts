import { randomUUID } from "node:crypto";
import type { UploadQuota } from "@refvid/core";
import { describe, expect, it } from "vitest";
import type { Store, UploadRecord } from "../types.js";
import { addKey, at, makeTenant, scopeOf, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** An upload of `tenant`'s key, made at T0 + `madeAt` ms and expiring `ttlMs` later. */
function upload(tenant: Tenant, overrides: Partial<UploadRecord> = {}): UploadRecord {
  return {
    id: `upload_${randomUUID().replaceAll("-", "")}`,
    organizationId: tenant.organizationId,
    apiKeyId: tenant.apiKeyId,
    environment: tenant.environment,
    contentType: "image/png",
    bytes: 183_412,
    fileName: "sculpture.png",
    createdAt: at(0),
    expiresAt: at(24 * 3_600_000),
    ...overrides,
  };
}

const lookup = (store: Store, tenant: Tenant, id: string) => store.getUpload({ ...scopeOf(tenant), id });

/** A default quota no test below reaches unless it means to. */
const ROOMY: UploadQuota = { bytes: 2 ** 40, count: 1_000 };

/** Records an upload that must fit. */
async function keep(store: Store, record: UploadRecord, defaults: UploadQuota = ROOMY) {
  expect(await store.createUpload(record, defaults)).toEqual({ kind: "created", upload: record });
}

const usageOf = (store: Store, tenant: Tenant, defaults: UploadQuota, now = at(0)) =>
  store.uploadUsage({ organizationId: tenant.organizationId, defaults, now });

export function uploadsContract(makeStore: StoreFactory): void {
  describe("reference uploads", () => {
    it.each([
      ["a small image with its name", { bytes: 1, fileName: "a.png" }],
      [
        "a 200 MiB video without a name",
        { bytes: 200 * 1024 * 1024, contentType: "video/mp4", fileName: null },
      ],
      ["a size past 2^31, kept exactly", { bytes: 2 ** 31 + 7, contentType: "video/quicktime" }],
    ])("keeps %s for its owner", async (_name, overrides) => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const record = upload(tenant, overrides);
      await keep(store, record);
      expect(await lookup(store, tenant, record.id)).toEqual(record);
    });

    it("shows an upload to no other organization, nor to the other environment of its own", async () => {
      const store = await makeStore();
      const owner = await makeTenant(store);
      const stranger = await makeTenant(store);
      const sandbox = await addKey(store, owner.organizationId, { environment: "test" });
      const otherLiveKey = await addKey(store, owner.organizationId);
      const record = upload(owner);
      await keep(store, record);
      expect(await lookup(store, stranger, record.id)).toBeNull();
      expect(await lookup(store, sandbox, record.id)).toBeNull();
      expect(await lookup(store, owner, "upload_unknown")).toBeNull();
      // Another key of the same organization and environment may use it.
      expect(await lookup(store, otherLiveKey, record.id)).toEqual(record);
    });

    it("still returns an expired upload: callers decide what expiry means", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const record = upload(tenant, { expiresAt: at(1) });
      await keep(store, record);
      expect(await lookup(store, tenant, record.id)).toEqual(record);
    });

    it("deletes an upload for its owner only, once", async () => {
      const store = await makeStore();
      const owner = await makeTenant(store);
      const stranger = await makeTenant(store);
      const sandbox = await addKey(store, owner.organizationId, { environment: "test" });
      const record = upload(owner);
      await keep(store, record);
      expect(await store.deleteUpload({ ...scopeOf(stranger), id: record.id })).toBe(false);
      expect(await store.deleteUpload({ ...scopeOf(sandbox), id: record.id })).toBe(false);
      expect(await store.deleteUpload({ ...scopeOf(owner), id: record.id })).toBe(true);
      expect(await store.deleteUpload({ ...scopeOf(owner), id: record.id })).toBe(false);
      expect(await lookup(store, owner, record.id)).toBeNull();
    });

    it("forgets exactly the uploads that expired at or before a time", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const early = upload(tenant, { expiresAt: at(1_000) });
      const onTheDot = upload(tenant, { expiresAt: at(2_000) });
      const later = upload(tenant, { expiresAt: at(2_001) });
      for (const record of [early, onTheDot, later]) await keep(store, record);
      expect(await store.deleteExpiredUploads(at(999))).toEqual([]);
      expect((await store.deleteExpiredUploads(at(2_000))).sort()).toEqual([early.id, onTheDot.id].sort());
      expect(await store.deleteExpiredUploads(at(2_000))).toEqual([]);
      expect(await lookup(store, tenant, early.id)).toBeNull();
      expect(await lookup(store, tenant, onTheDot.id)).toBeNull();
      expect(await lookup(store, tenant, later.id)).toEqual(later);
    });

    describe("upload quotas", () => {
      const quota: UploadQuota = { bytes: 1_000, count: 3 };

      it("counts the organization's unexpired uploads of both environments, and no one else's", async () => {
        const store = await makeStore();
        const owner = await makeTenant(store);
        const sandbox = await addKey(store, owner.organizationId, { environment: "test" });
        const stranger = await makeTenant(store);
        await keep(store, upload(owner, { bytes: 100 }));
        await keep(store, upload(sandbox, { bytes: 200 }));
        await keep(store, upload(owner, { bytes: 400, expiresAt: at(1_000) }));
        await keep(store, upload(stranger, { bytes: 900 }));
        expect(await usageOf(store, owner, quota)).toEqual({ usage: { bytes: 700, count: 3 }, quota });
        // At its expiry an upload no longer counts, swept or not.
        expect(await usageOf(store, owner, quota, at(1_000))).toEqual({
          usage: { bytes: 300, count: 2 },
          quota,
        });
        expect(
          await store.uploadUsage({ organizationId: "org_missing", defaults: quota, now: at(0) }),
        ).toBeNull();
      });

      it.each<[string, Partial<UploadRecord>[], number, unknown]>([
        ["takes an upload that reaches the bytes exactly", [{ bytes: 600 }], 400, null],
        [
          "refuses one byte more, naming the bytes, the use and the limit",
          [{ bytes: 600 }],
          401,
          { quota: "bytes", used: 600, limit: 1_000 },
        ],
        [
          "refuses a fourth upload, however small",
          [{ bytes: 1 }, { bytes: 1 }, { bytes: 1 }],
          1,
          { quota: "count", used: 3, limit: 3 },
        ],
        [
          "takes a fourth once one has expired",
          [{ bytes: 1 }, { bytes: 1 }, { bytes: 1, expiresAt: at(0) }],
          1,
          null,
        ],
      ])("%s", async (_name, earlier, bytes, refused) => {
        const store = await makeStore();
        const tenant = await makeTenant(store);
        for (const overrides of earlier) await keep(store, upload(tenant, overrides), quota);
        const record = upload(tenant, { bytes });
        const result = await store.createUpload(record, quota);
        if (refused === null) expect(result).toEqual({ kind: "created", upload: record });
        else {
          expect(result).toEqual({ kind: "over_quota", decision: { ok: false, ...(refused as object) } });
          expect(await lookup(store, tenant, record.id)).toBeNull();
        }
      });

      it("frees the quota when an upload is deleted", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store);
        const first = upload(tenant, { bytes: 900 });
        await keep(store, first, quota);
        expect((await store.createUpload(upload(tenant, { bytes: 200 }), quota)).kind).toBe("over_quota");
        await store.deleteUpload({ ...scopeOf(tenant), id: first.id });
        await keep(store, upload(tenant, { bytes: 200 }), quota);
      });

      it("holds an organization to its own quota, part by part, and back to the default on null", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store);
        const other = await makeTenant(store);
        const raised = await store.updateOrganization(tenant.organizationId, {
          uploadQuota: { bytes: 5_000 },
        });
        expect(raised?.uploadQuota).toEqual({ bytes: 5_000, count: null });
        const both = await store.updateOrganization(tenant.organizationId, { uploadQuota: { count: 1 } });
        expect(both?.uploadQuota).toEqual({ bytes: 5_000, count: 1 });
        expect((await store.getOrganization(tenant.organizationId))?.uploadQuota).toEqual({
          bytes: 5_000,
          count: 1,
        });
        expect(await usageOf(store, tenant, quota)).toEqual({
          usage: { bytes: 0, count: 0 },
          quota: { bytes: 5_000, count: 1 },
        });
        await keep(store, upload(tenant, { bytes: 4_000 }), quota);
        expect(await store.createUpload(upload(tenant, { bytes: 1 }), quota)).toEqual({
          kind: "over_quota",
          decision: { ok: false, quota: "count", used: 1, limit: 1 },
        });
        // Another organization keeps the default.
        expect((await store.createUpload(upload(other, { bytes: 4_000 }), quota)).kind).toBe("over_quota");
        const reset = await store.updateOrganization(tenant.organizationId, {
          uploadQuota: { bytes: null, count: null },
        });
        expect(reset?.uploadQuota).toEqual({ bytes: null, count: null });
        expect(await usageOf(store, tenant, quota)).toMatchObject({ quota });
        expect(await store.updateOrganization("org_missing", { uploadQuota: { bytes: 1 } })).toBeNull();
        expect(await store.createUpload(upload({ ...tenant, organizationId: "org_missing" }), quota)).toEqual(
          {
            kind: "organization_gone",
          },
        );
      });

      it("lets racing uploads past the quota together never: exactly those that fit are kept", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store);
        const records = Array.from({ length: 12 }, () => upload(tenant, { bytes: 300 }));
        const results = await Promise.all(
          records.map((record) => store.createUpload(record, { bytes: 1_000, count: 100 })),
        );
        expect(results.filter((r) => r.kind === "created")).toHaveLength(3);
        expect(results.filter((r) => r.kind === "over_quota")).toHaveLength(9);
        expect((await usageOf(store, tenant, quota))?.usage).toEqual({ bytes: 900, count: 3 });
      });
    });
  });
}
