/**
 * Upload quotas end to end (docs/decisions.md, "Reference uploads"): an organization keeps at most
 * so many bytes and so many uploads at once, from the operator's defaults or its own quota set by
 * the admin API; the upload that would pass either is `413 upload_quota_exceeded` naming the
 * quota, the use and the limit, before its body is read when that can be known, and nothing of it
 * is kept. On memory and, with DATABASE_URL, on Postgres (racing uploads included).
 */
import { statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { type Tenant, useTestRefvid } from "./harness.js";
import { SCULPTURE, sendSlowly, specSchema } from "./upload-helpers.js";

const isQuotaError = specSchema("UploadQuotaError");
const isOrganization = specSchema("Organization");

/** The defaults of this file: room for two sample images and half of a third, and five uploads. */
const QUOTA_BYTES = Math.floor(2.5 * statSync(SCULPTURE).size);
const QUOTA_COUNT = 5;

describe("upload quotas", () => {
  const server = useTestRefvid({
    REFVID_UPLOAD_QUOTA_BYTES: String(QUOTA_BYTES),
    REFVID_UPLOAD_QUOTA_COUNT: String(QUOTA_COUNT),
  });
  let png: Buffer;
  beforeAll(async () => {
    png = await readFile(SCULPTURE);
  });

  const tenant = (environment: "live" | "test" = "live") =>
    server.tenant({ rateLimitPerMinute: 1_000, environment });
  const upload = (t: Pick<Tenant, "apiKey">, body: Buffer | FormData = png) =>
    fetch(`${server.url}/v1/files`, {
      method: "POST",
      headers: {
        authorization: `Key ${t.apiKey}`,
        ...(body instanceof FormData ? {} : { "content-type": "image/png" }),
      },
      body,
    });
  const filesDir = () => join(server.refvid.deps.config.dataDir, "files");
  /** The uploads' bytes in the blob store, and the partial files being written. */
  const stored = async () => {
    const names = await readdir(filesDir()).catch(() => [] as string[]);
    return {
      uploads: names.filter((n) => n.startsWith("upload_") && !n.includes(".")).length,
      partial: names.filter((n) => n.includes(".partial-")).length,
    };
  };
  const quotaOf = async (t: Tenant) => (await t.call("GET", "/v1/account")).body.upload_quota;
  const setQuota = (organizationId: string, quota: { bytes?: number | null; count?: number | null }) =>
    server.admin("PATCH", `/admin/v1/organizations/${organizationId}`, { upload_quota: quota });

  it("refuses the upload that would pass the bytes quota, names it, keeps nothing, and takes it once room is made", async () => {
    const t = await tenant();
    const first = (await (await upload(t)).json()) as { file_id: string };
    expect((await upload(t)).status).toBe(201);
    const before = await stored();
    const refused = await upload(t);
    expect(refused.status).toBe(413);
    const body = (await refused.json()) as { error: Record<string, unknown> };
    isQuotaError(body);
    expect(body.error).toMatchObject({
      type: "upload_quota_exceeded",
      code: 413,
      quota: "bytes",
      used: 2 * png.length,
      limit: QUOTA_BYTES,
    });
    expect(body.error.message).toMatch(new RegExp(`upload bytes quota of ${QUOTA_BYTES} bytes`));
    expect(await stored()).toEqual(before);
    expect(await quotaOf(t)).toEqual({
      bytes_limit: QUOTA_BYTES,
      bytes_used: 2 * png.length,
      count_limit: QUOTA_COUNT,
      count_used: 2,
    });
    // A deleted upload frees its room.
    expect((await t.call("DELETE", `/v1/files/${first.file_id}`)).status).toBe(200);
    expect((await upload(t)).status).toBe(201);
  });

  it("refuses a body announced larger than the bytes left before reading it, a form's too", async () => {
    const t = await tenant();
    expect((await upload(t)).status).toBe(201);
    const before = await stored();
    // 1 MiB announced, the sample image's bytes sent: the answer comes without the rest.
    for (const [contentType, length] of [
      ["image/png", 1024 * 1024],
      ["multipart/form-data; boundary=x", 1024 * 1024],
    ] as const) {
      const early = await sendSlowly(
        `${server.url}/v1/files`,
        { authorization: `Key ${t.apiKey}`, "content-type": contentType, "content-length": String(length) },
        png,
        0,
      );
      expect(early.status).toBe(413);
      expect(JSON.parse(early.body).error).toMatchObject({
        quota: "bytes",
        used: png.length,
        limit: QUOTA_BYTES,
      });
    }
    expect(await stored()).toEqual(before);
  });

  it("cuts off a body without a length the moment it passes the bytes left, and removes what was written", async () => {
    const t = await tenant();
    const before = await stored();
    // A PNG that goes on for 3 MiB more, chunked: past the quota after its first MiB.
    const cut = await sendSlowly(
      `${server.url}/v1/files`,
      { authorization: `Key ${t.apiKey}`, "content-type": "image/png" },
      png,
      3,
    );
    expect(cut.status).toBe(413);
    expect(JSON.parse(cut.body).error).toMatchObject({
      type: "upload_quota_exceeded",
      quota: "bytes",
      used: 0,
    });
    expect(await stored()).toEqual(before);
    expect(await quotaOf(t)).toMatchObject({ bytes_used: 0, count_used: 0 });
  });

  it("counts uploads of both environments against one count quota, and refuses the next before reading it", async () => {
    const live = await tenant();
    const sandbox = await server.admin("POST", `/admin/v1/organizations/${live.organizationId}/api-keys`, {
      environment: "test",
      rate_limit_per_minute: 1_000,
    });
    const tiny = png.subarray(0, 64); // the PNG signature is enough to be taken as one
    expect((await setQuota(live.organizationId, { count: 2 })).status).toBe(200);
    expect((await upload(live, tiny)).status).toBe(201);
    expect((await upload({ apiKey: sandbox.body.key }, tiny)).status).toBe(201);
    const form = new FormData();
    form.append("file", new Blob([tiny]), "tiny.png");
    for (const body of [tiny, form]) {
      const refused = await upload(live, body);
      expect(refused.status).toBe(413);
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({
        quota: "count",
        used: 2,
        limit: 2,
      });
    }
    expect(await quotaOf(live)).toEqual({
      bytes_limit: QUOTA_BYTES,
      bytes_used: 128,
      count_limit: 2,
      count_used: 2,
    });
  });

  it("holds an organization to its own quota set by the admin API, part by part, and back to the default on null", async () => {
    const t = await tenant();
    const other = await tenant();
    const big = Buffer.concat([png, Buffer.alloc(QUOTA_BYTES)]); // past the default on its own
    expect((await upload(t, big)).status).toBe(413);

    const raisedBytes = 2 * big.length;
    const raised = await setQuota(t.organizationId, { bytes: raisedBytes });
    expect(raised.status).toBe(200);
    isOrganization(raised.body);
    expect(raised.body.upload_quota).toEqual({ bytes: raisedBytes, count: QUOTA_COUNT });
    expect(
      (await server.admin("GET", `/admin/v1/organizations/${t.organizationId}`)).body.upload_quota,
    ).toEqual({
      bytes: raisedBytes,
      count: QUOTA_COUNT,
    });
    expect((await upload(t, big)).status).toBe(201);
    // Another organization keeps the default.
    expect((await upload(other, big)).status).toBe(413);

    const back = await setQuota(t.organizationId, { bytes: null });
    expect(back.body.upload_quota).toEqual({ bytes: QUOTA_BYTES, count: QUOTA_COUNT });
    // Lowering it deletes nothing; the next upload is refused.
    expect(await quotaOf(t)).toMatchObject({ bytes_used: big.length, bytes_limit: QUOTA_BYTES });
    expect((await upload(t, png.subarray(0, 64))).status).toBe(413);

    for (const [body, status] of [
      [{ upload_quota: { bytes: -1 } }, 400],
      [{ upload_quota: {} }, 400],
      [{ name: "renamed" }, 400],
    ] as const) {
      expect((await server.admin("PATCH", `/admin/v1/organizations/${t.organizationId}`, body)).status).toBe(
        status,
      );
    }
    expect((await setQuota("org_missing", { bytes: 1 })).status).toBe(404);
  });

  it("keeps exactly the racing uploads that fit, and nothing of the others", async () => {
    const t = await tenant();
    expect((await setQuota(t.organizationId, { bytes: 5 * png.length, count: 100 })).status).toBe(200);
    const before = await stored();
    const answers = await Promise.all(Array.from({ length: 16 }, () => upload(t)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(5).fill(201), ...Array(11).fill(413)]);
    expect(await quotaOf(t)).toMatchObject({ bytes_used: 5 * png.length, count_used: 5 });
    expect(await stored()).toEqual({ uploads: before.uploads + 5, partial: 0 });
  });
});
