/** The admin API's lists: organizations, and an organization's keys and top-ups, newest first. */
import type { components } from "@refvid/api-types";
import type { AppDeps } from "../deps.js";
import { apiKeyView, organizationView, orgNotFound, topUpView } from "./admin.js";
import { pageOf, pageStart } from "./keyset-page.js";

type Schemas = components["schemas"];

/** A page's size and position, as the query gives them. */
export interface PageQuery {
  limit?: number | undefined;
  cursor?: string | undefined;
}

export async function listOrganizations(
  deps: AppDeps,
  query: PageQuery & { name?: string | undefined },
): Promise<Schemas["OrganizationPage"]> {
  const { limit = 20, cursor, name } = query;
  const { after, filterHash } = pageStart(cursor, { name }, "query.cursor");
  const found = await deps.store.listOrganizations({
    limit: limit + 1,
    ...(name !== undefined ? { namePrefix: name } : {}),
    ...(after ? { after } : {}),
  });
  return pageOf(found, limit, filterHash, organizationView);
}

export async function listApiKeys(
  deps: AppDeps,
  organizationId: string,
  query: PageQuery & { revoked?: boolean | undefined },
): Promise<Schemas["ApiKeyPage"]> {
  const { limit = 20, cursor, revoked } = query;
  const { after, filterHash } = pageStart(cursor, { organizationId, revoked }, "query.cursor");
  await mustExist(deps, organizationId);
  const found = await deps.store.listApiKeys({
    organizationId,
    limit: limit + 1,
    ...(revoked !== undefined ? { revoked } : {}),
    ...(after ? { after } : {}),
  });
  return pageOf(found, limit, filterHash, apiKeyView);
}

export async function listTopUps(
  deps: AppDeps,
  organizationId: string,
  query: PageQuery,
): Promise<Schemas["TopUpPage"]> {
  const { limit = 20, cursor } = query;
  const { after, filterHash } = pageStart(cursor, { organizationId }, "query.cursor");
  await mustExist(deps, organizationId);
  const found = await deps.store.listTopUps({
    organizationId,
    limit: limit + 1,
    ...(after ? { after } : {}),
  });
  return pageOf(found, limit, filterHash, topUpView);
}

/** An empty list of an organization that does not exist is a 404, not an empty page. */
export async function mustExist(deps: AppDeps, organizationId: string): Promise<void> {
  if (!(await deps.store.getOrganization(organizationId))) throw orgNotFound(organizationId);
}
