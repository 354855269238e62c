/**
 * MemoryStore's account lists for the admin API: organizations, and each organization's keys and
 * top-ups, newest first by keyset. Holds the live records: copy before handing one out.
 */
import type {
  ApiKeyRecord,
  ApiKeySearch,
  OrganizationRecord,
  OrganizationSearch,
  TopUpRecord,
  TopUpSearch,
} from "../types.js";
import { KeysetList, listIn, take } from "./keyset-list.js";

export class AccountIndex {
  private readonly organizations = new KeysetList<OrganizationRecord>();
  private readonly keys = new Map<string, KeysetList<ApiKeyRecord>>();
  private readonly topUps = new Map<string, KeysetList<TopUpRecord>>();

  addOrganization(org: OrganizationRecord): void {
    this.organizations.add(org);
  }

  addApiKey(key: ApiKeyRecord): void {
    listIn(this.keys, key.organizationId).add(key);
  }

  addTopUp(topUp: TopUpRecord): void {
    listIn(this.topUps, topUp.organizationId).add(topUp);
  }

  listOrganizations({ namePrefix, limit, after }: OrganizationSearch): OrganizationRecord[] {
    return take(this.organizations.descending(after), limit, (org) =>
      namePrefix === undefined ? true : org.name.startsWith(namePrefix),
    );
  }

  listApiKeys({ organizationId, revoked, limit, after }: ApiKeySearch): ApiKeyRecord[] {
    const keys = this.keys.get(organizationId)?.descending(after) ?? [];
    return take(keys, limit, (key) => revoked === undefined || (key.revokedAt !== null) === revoked);
  }

  listTopUps({ organizationId, limit, after }: TopUpSearch): TopUpRecord[] {
    return take(this.topUps.get(organizationId)?.descending(after) ?? [], limit);
  }
}
