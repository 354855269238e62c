/** The admin API's run search: runs of every organization and both environments, newest first. */
import type { components } from "@refvid/api-types";
import type { AppDeps } from "../deps.js";
import { toAdminRun } from "../views/run-view.js";
import { keyNotFound } from "./admin.js";
import { mustExist } from "./admin-lists.js";
import { pageOf, pageStart, parseInstant } from "./keyset-page.js";

type Schemas = components["schemas"];

export async function adminSearchRuns(
  deps: AppDeps,
  body: Schemas["AdminSearchRunsRequest"],
): Promise<Schemas["AdminRunPage"]> {
  const { cursor, limit = 20, ...filters } = body;
  const start = pageStart(deps.cursors, {
    listing: "admin run search",
    cursor,
    filters,
    field: "body.cursor",
  });
  const createdAfter = parseInstant(filters.created_after, "body.created_after");
  const createdBefore = parseInstant(filters.created_before, "body.created_before");
  // A filter naming nothing is more likely a mistake than a question: say so.
  if (filters.organization_id !== undefined) await mustExist(deps, filters.organization_id);
  if (filters.api_key_id !== undefined && !(await deps.store.getApiKey(filters.api_key_id))) {
    throw keyNotFound(filters.api_key_id);
  }
  const runs = await deps.store.searchAllRuns({
    limit: limit + 1,
    ...(filters.organization_id !== undefined ? { organizationId: filters.organization_id } : {}),
    ...(filters.api_key_id !== undefined ? { apiKeyId: filters.api_key_id } : {}),
    ...(filters.environment ? { environment: filters.environment } : {}),
    ...(filters.status ? { statuses: filters.status } : {}),
    ...(filters.endpoint ? { endpoint: filters.endpoint } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  const now = deps.clock.now();
  return pageOf(runs, limit, start, (run) => toAdminRun(run, deps.signer, now));
}
