/**
 * Per-organization quotas on reference uploads (`POST /v1/files`): the bytes and the number of
 * uploads an organization keeps at once, both environments together, counting only uploads not
 * yet expired or deleted (docs/decisions.md, "Reference uploads"). The operator sets the defaults;
 * an organization may have its own. Stores apply `decideUpload` when they record an upload, under
 * the organization's row lock, so racing uploads cannot pass the quota together.
 */

/** The most an organization keeps at once: bytes and uploads. */
export interface UploadQuota {
  bytes: number;
  count: number;
}

/** What an organization's kept uploads take now. */
export interface UploadUsage {
  bytes: number;
  count: number;
}

/** An organization's own quota; a null part is the operator's default. */
export interface UploadQuotaOverride {
  bytes: number | null;
  count: number | null;
}

/** The quota in force: the organization's own where it has one, the default elsewhere. */
export const quotaInForce = (own: UploadQuotaOverride, defaults: UploadQuota): UploadQuota => ({
  bytes: own.bytes ?? defaults.bytes,
  count: own.count ?? defaults.count,
});

export type UploadQuotaDecision =
  | { ok: true }
  | { ok: false; quota: "bytes" | "count"; used: number; limit: number };

/**
 * Whether one more upload of `bytes` fits beside `usage`: first the count (known before a byte
 * arrives), then the bytes. At the limit exactly is within it.
 */
export function decideUpload(usage: UploadUsage, quota: UploadQuota, bytes: number): UploadQuotaDecision {
  if (usage.count + 1 > quota.count)
    return { ok: false, quota: "count", used: usage.count, limit: quota.count };
  if (usage.bytes + bytes > quota.bytes)
    return { ok: false, quota: "bytes", used: usage.bytes, limit: quota.bytes };
  return { ok: true };
}

/** Bytes one more upload may take now (never below 0). */
export const bytesLeft = (usage: UploadUsage, quota: UploadQuota): number =>
  Math.max(0, quota.bytes - usage.bytes);
