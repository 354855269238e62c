import { describe, expect, it } from "vitest";
import { UploadQuotaExceededError } from "./errors.js";
import { bytesLeft, decideUpload, quotaInForce, type UploadQuota, type UploadUsage } from "./upload-quota.js";

const quota: UploadQuota = { bytes: 1_000, count: 3 };

describe("decideUpload", () => {
  const zero: UploadQuota = { bytes: 0, count: 5 };
  it.each<[string, UploadUsage, number, UploadQuota, unknown]>([
    ["takes an upload within both", { bytes: 0, count: 0 }, 500, quota, { ok: true }],
    ["takes an upload that reaches the bytes exactly", { bytes: 400, count: 2 }, 600, quota, { ok: true }],
    [
      "refuses one byte past the bytes",
      { bytes: 400, count: 1 },
      601,
      quota,
      { ok: false, quota: "bytes", used: 400, limit: 1_000 },
    ],
    [
      "refuses a fourth upload, however small",
      { bytes: 3, count: 3 },
      1,
      quota,
      { ok: false, quota: "count", used: 3, limit: 3 },
    ],
    [
      "names the count first when both are past",
      { bytes: 1_000, count: 3 },
      1,
      quota,
      { ok: false, quota: "count", used: 3, limit: 3 },
    ],
    [
      "refuses any byte once a lowered quota is below the use",
      { bytes: 1_200, count: 1 },
      1,
      quota,
      { ok: false, quota: "bytes", used: 1_200, limit: 1_000 },
    ],
    [
      "refuses everything with a quota of zero",
      { bytes: 0, count: 0 },
      1,
      zero,
      { ok: false, quota: "bytes", used: 0, limit: 0 },
    ],
  ])("%s", (_name, usage, bytes, within, want) => {
    expect(decideUpload(usage, within, bytes)).toEqual(want);
  });
});

describe("quotaInForce and bytesLeft", () => {
  it.each<[string, { bytes: number | null; count: number | null }, UploadQuota]>([
    [
      "the defaults where the organization has none",
      { bytes: null, count: null },
      { bytes: 1_000, count: 3 },
    ],
    ["the organization's own bytes, the default count", { bytes: 10, count: null }, { bytes: 10, count: 3 }],
    ["the organization's own, zero included", { bytes: 0, count: 0 }, { bytes: 0, count: 0 }],
  ])("%s", (_name, own, want) => {
    expect(quotaInForce(own, quota)).toEqual(want);
  });

  it("leaves what the quota has room for, never less than nothing", () => {
    expect(bytesLeft({ bytes: 400, count: 1 }, quota)).toBe(600);
    expect(bytesLeft({ bytes: 1_200, count: 1 }, quota)).toBe(0);
  });
});

describe("UploadQuotaExceededError", () => {
  it("names the quota, the use and the limit, and says what to do", () => {
    const bytes = new UploadQuotaExceededError("bytes", 5 * 1024 ** 3 - 10, 5 * 1024 ** 3);
    expect(bytes).toMatchObject({ status: 413, type: "upload_quota_exceeded" });
    expect(bytes.message).toBe(
      "This upload would take the organization's uploads past its upload bytes quota of 5368709120 bytes (5.0 GiB); 5368709110 bytes (5.0 GiB) are in use. " +
        "Delete uploads no longer needed (DELETE /v1/files/{file_id}) or wait for them to expire, or ask the operator for a larger quota.",
    );
    expect(new UploadQuotaExceededError("bytes", 0, 16_000).message).toMatch(
      /^This upload would take the organization's uploads past its upload bytes quota of 16000 bytes \(15\.6 KiB\); 0 bytes are in use\./,
    );
    expect(new UploadQuotaExceededError("count", 1_000, 1_000).message).toMatch(
      /^The organization keeps 1000 uploads; its upload count quota is 1000\. Delete uploads/,
    );
  });
});
