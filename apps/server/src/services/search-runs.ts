/**
 * Search (interface, "Endpoints" 4): the organization's runs of the caller's environment, newest
 * first, with keyset cursors.
 */
import type { RunPage, SearchRunsRequest } from "@refvid/api-types";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { toApiRun } from "../views/run-view.js";
import { pageOf, pageStart, parseInstant } from "./keyset-page.js";

export async function searchRuns(deps: AppDeps, caller: Caller, body: SearchRunsRequest): Promise<RunPage> {
  const { cursor, limit = 20, ...filters } = body;
  const start = pageStart(deps.cursors, { listing: "run search", cursor, filters, field: "body.cursor" });
  const createdAfter = parseInstant(filters.created_after, "body.created_after");
  const createdBefore = parseInstant(filters.created_before, "body.created_before");
  const runs = await deps.store.searchRuns({
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    limit: limit + 1,
    ...(filters.status ? { statuses: filters.status } : {}),
    ...(filters.endpoint ? { endpoint: filters.endpoint } : {}),
    // A key of another organization or environment matches none of the runs searched.
    ...(filters.api_key_id !== undefined ? { apiKeyId: filters.api_key_id } : {}),
    ...(createdAfter ? { createdAfter } : {}),
    ...(createdBefore ? { createdBefore } : {}),
    ...(filters.metadata ? { metadata: filters.metadata } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  const now = deps.clock.now();
  return pageOf(runs, limit, start, (run) => toApiRun(run, deps.signer, now));
}
