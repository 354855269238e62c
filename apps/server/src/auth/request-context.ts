/**
 * Who is calling: set by authentication, read by every service. It may be up to a second old
 * (auth/key-cache.ts): use it for who the caller is, and read anything that changes (counters,
 * secrets, caps) from the store.
 */
import type { ApiKeyRecord, OrganizationRecord } from "@refvid/store";

export interface Caller {
  apiKey: ApiKeyRecord;
  organization: OrganizationRecord;
}
