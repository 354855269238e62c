/**
 * MemoryStore's reference uploads: records by id, visible only to their organization and
 * environment, and held to each organization's upload quota. Methods are bound, so MemoryStore
 * hands them out as its own; each runs without awaiting, so a quota check and the record it
 * admits are one step.
 */
import { decideUpload, quotaInForce, type UploadQuota, type UploadUsage } from "@refvid/core";
import type * as T from "../types.js";
import type { OrganizationRecord, UploadRecord } from "../types.js";
import { copy } from "./copy.js";

export class MemoryUploads {
  private readonly uploads = new Map<string, UploadRecord>();
  /** Upload ids per organization, so a quota check reads one organization's uploads only. */
  private readonly byOrganization = new Map<string, Set<string>>();

  constructor(private readonly organizations: ReadonlyMap<string, OrganizationRecord>) {}

  private owned(input: { organizationId: string; environment: string; id: string }) {
    const upload = this.uploads.get(input.id);
    return upload &&
      upload.organizationId === input.organizationId &&
      upload.environment === input.environment
      ? upload
      : null;
  }

  private usage(organizationId: string, now: Date): UploadUsage {
    const usage = { bytes: 0, count: 0 };
    for (const id of this.byOrganization.get(organizationId) ?? []) {
      const upload = this.uploads.get(id);
      if (upload && upload.expiresAt > now) {
        usage.bytes += upload.bytes;
        usage.count += 1;
      }
    }
    return usage;
  }

  private forget(id: string) {
    const upload = this.uploads.get(id);
    if (!upload) return;
    this.uploads.delete(id);
    this.byOrganization.get(upload.organizationId)?.delete(id);
  }

  readonly createUpload = async (record: UploadRecord, defaults: UploadQuota) => {
    const org = this.organizations.get(record.organizationId);
    if (!org) return { kind: "organization_gone" } as const;
    const decision = decideUpload(
      this.usage(record.organizationId, record.createdAt),
      quotaInForce(org.uploadQuota, defaults),
      record.bytes,
    );
    if (!decision.ok) return { kind: "over_quota", decision } as const;
    this.uploads.set(record.id, copy(record));
    const ids = this.byOrganization.get(record.organizationId) ?? new Set<string>();
    this.byOrganization.set(record.organizationId, ids.add(record.id));
    return { kind: "created", upload: copy(record) } as const;
  };

  readonly uploadUsage = async ({ organizationId, defaults, now }: Parameters<T.Store["uploadUsage"]>[0]) => {
    const org = this.organizations.get(organizationId);
    if (!org) return null;
    return { usage: this.usage(organizationId, now), quota: quotaInForce(org.uploadQuota, defaults) };
  };

  readonly getUpload = async (input: Parameters<T.Store["getUpload"]>[0]) => {
    const upload = this.owned(input);
    return upload ? copy(upload) : null;
  };

  readonly deleteUpload = async (input: Parameters<T.Store["deleteUpload"]>[0]) => {
    if (this.owned(input) === null) return false;
    this.forget(input.id);
    return true;
  };

  readonly deleteExpiredUploads = async (now: Date) => {
    const deleted: string[] = [];
    for (const [id, upload] of this.uploads) {
      if (upload.expiresAt <= now) {
        this.forget(id);
        deleted.push(id);
      }
    }
    return deleted;
  };
}
