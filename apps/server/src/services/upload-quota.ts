/**
 * The upload quota at `POST /v1/files` (docs/decisions.md, "Reference uploads"), checked twice: here
 * before a byte of the body is read, against what the organization keeps now, and again by the
 * store when the upload is recorded, under the organization's lock (core's `decideUpload` both
 * times). Between the two the body streams in capped at the bytes left, so racing uploads may
 * each stream up to that much, but only those that still fit when recorded are kept.
 */
import {
  bytesLeft,
  decideUpload,
  UnauthorizedError,
  type UploadQuota,
  UploadQuotaExceededError,
  type UploadUsage,
} from "@refvid/core";
import type { AppDeps } from "../deps.js";

/** What an organization keeps, its quota, and the most the next upload may take. */
export interface UploadRoom {
  usage: UploadUsage;
  quota: UploadQuota;
  bytesLeft: number;
}

/**
 * The room the organization has for one more upload; `413 upload_quota_exceeded` at once when it
 * has none: its count is reached, no byte is left, or the file announced (`fileBytes`, when the
 * request says its length) is larger than what is left.
 */
export async function uploadRoom(
  deps: AppDeps,
  organizationId: string,
  fileBytes: number | null,
): Promise<UploadRoom> {
  const found = await deps.store.uploadUsage({
    organizationId,
    defaults: deps.config.uploadQuota,
    now: deps.clock.now(),
  });
  if (!found) throw new UnauthorizedError("This API key's organization no longer exists.");
  // An empty file is refused for what it is (415), so every upload takes at least a byte.
  const decision = decideUpload(found.usage, found.quota, Math.max(1, fileBytes ?? 1));
  if (!decision.ok) throw new UploadQuotaExceededError(decision.quota, decision.used, decision.limit);
  return { ...found, bytesLeft: bytesLeft(found.usage, found.quota) };
}
