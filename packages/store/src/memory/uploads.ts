/**
 * MemoryStore's reference uploads: records by id, visible only to their organization and
 * environment. Methods are bound, so MemoryStore hands them out as its own.
 */
import type * as T from "../types.js";
import type { UploadRecord } from "../types.js";
import { copy } from "./copy.js";

export class MemoryUploads {
  private readonly uploads = new Map<string, UploadRecord>();

  private owned(input: { organizationId: string; environment: string; id: string }) {
    const upload = this.uploads.get(input.id);
    return upload &&
      upload.organizationId === input.organizationId &&
      upload.environment === input.environment
      ? upload
      : null;
  }

  readonly createUpload = async (record: UploadRecord) => {
    this.uploads.set(record.id, copy(record));
    return copy(record);
  };

  readonly getUpload = async (input: Parameters<T.Store["getUpload"]>[0]) => {
    const upload = this.owned(input);
    return upload ? copy(upload) : null;
  };

  readonly deleteUpload = async (input: Parameters<T.Store["deleteUpload"]>[0]) =>
    this.owned(input) !== null && this.uploads.delete(input.id);

  readonly deleteExpiredUploads = async (now: Date) => {
    const deleted: string[] = [];
    for (const [id, upload] of this.uploads) {
      if (upload.expiresAt <= now) {
        this.uploads.delete(id);
        deleted.push(id);
      }
    }
    return deleted;
  };
}
