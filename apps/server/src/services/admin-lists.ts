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
  const start = pageStart(deps.cursors, {
    listing: "organization list",
    cursor,
    filters: { name },
    field: "query.cursor",
  });
  const found = await deps.store.listOrganizations({
    limit: limit + 1,
    ...(name !== undefined ? { namePrefix: name } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  return pageOf(found, limit, start, (org) => organizationView(org, deps.config.uploadQuota));
}

export async function listApiKeys(
  deps: AppDeps,
  organizationId: string,
  query: PageQuery & { revoked?: boolean | undefined },
): Promise<Schemas["ApiKeyPage"]> {
  const { limit = 20, cursor, revoked } = query;
  const start = pageStart(deps.cursors, {
    listing: "API key list",
    cursor,
    filters: { organizationId, revoked },
    field: "query.cursor",
  });
  await mustExist(deps, organizationId);
  const found = await deps.store.listApiKeys({
    organizationId,
    limit: limit + 1,
    ...(revoked !== undefined ? { revoked } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  const now = deps.clock.now();
  return pageOf(found, limit, start, (key) => apiKeyView(key, now));
}

export async function listTopUps(
  deps: AppDeps,
  organizationId: string,
  query: PageQuery,
): Promise<Schemas["TopUpPage"]> {
  const { limit = 20, cursor } = query;
  const start = pageStart(deps.cursors, {
    listing: "top-up list",
    cursor,
    filters: { organizationId },
    field: "query.cursor",
  });
  await mustExist(deps, organizationId);
  const found = await deps.store.listTopUps({
    organizationId,
    limit: limit + 1,
    ...(start.after ? { after: start.after } : {}),
  });
  return pageOf(found, limit, start, topUpView);
}

/** An empty list of an organization that does not exist is a 404, not an empty page. */
export async function mustExist(deps: AppDeps, organizationId: string): Promise<void> {
  if (!(await deps.store.getOrganization(organizationId))) throw orgNotFound(organizationId);
}
