/** Who is calling: set by authentication, read by every service. */
import type { ApiKeyRecord, OrganizationRecord } from "@refvid/store";

export interface Caller {
  apiKey: ApiKeyRecord;
  organization: OrganizationRecord;
}
