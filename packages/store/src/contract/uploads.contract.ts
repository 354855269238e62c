import { randomUUID } from "node:crypto";
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
      expect(await store.createUpload(record)).toEqual(record);
      expect(await lookup(store, tenant, record.id)).toEqual(record);
    });

    it("shows an upload to no other organization, nor to the other environment of its own", async () => {
      const store = await makeStore();
      const owner = await makeTenant(store);
      const stranger = await makeTenant(store);
      const sandbox = await addKey(store, owner.organizationId, { environment: "test" });
      const otherLiveKey = await addKey(store, owner.organizationId);
      const record = upload(owner);
      await store.createUpload(record);
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
      await store.createUpload(record);
      expect(await lookup(store, tenant, record.id)).toEqual(record);
    });

    it("deletes an upload for its owner only, once", async () => {
      const store = await makeStore();
      const owner = await makeTenant(store);
      const stranger = await makeTenant(store);
      const sandbox = await addKey(store, owner.organizationId, { environment: "test" });
      const record = upload(owner);
      await store.createUpload(record);
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
      for (const record of [early, onTheDot, later]) await store.createUpload(record);
      expect(await store.deleteExpiredUploads(at(999))).toEqual([]);
      expect((await store.deleteExpiredUploads(at(2_000))).sort()).toEqual([early.id, onTheDot.id].sort());
      expect(await store.deleteExpiredUploads(at(2_000))).toEqual([]);
      expect(await lookup(store, tenant, early.id)).toBeNull();
      expect(await lookup(store, tenant, onTheDot.id)).toBeNull();
      expect(await lookup(store, tenant, later.id)).toEqual(later);
    });
  });
}
