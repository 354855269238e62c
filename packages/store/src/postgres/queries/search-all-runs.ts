import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";

/**
 * The statement an operator's search sends: newest first by `(created_at, id)`, keyset paging
 * after a cursor. One key's runs come through `runs_by_api_key`, one organization and environment
 * through `runs_search`, and everything else through `runs_by_created`. One organization's runs of
 * both environments are each environment's page through `runs_search`, merged: at most two pages
 * are sorted, never the organization's history. Exported so a test EXPLAINs exactly this statement.
 */
export function searchAllRunsQuery(search: T.AdminRunSearch): { text: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  if (search.organizationId !== undefined) where.push(`organization_id = ${param(search.organizationId)}`);
  if (search.apiKeyId !== undefined) where.push(`api_key_id = ${param(search.apiKeyId)}`);
  if (search.environment) where.push(`environment = ${param(search.environment)}`);
  if (search.statuses) where.push(`status = any(${param(search.statuses)}::text[])`);
  if (search.endpoint) where.push(`endpoint = ${param(search.endpoint)}`);
  if (search.createdAfter) where.push(`created_at >= ${param(search.createdAfter)}`);
  if (search.createdBefore) where.push(`created_at < ${param(search.createdBefore)}`);
  if (search.after) {
    where.push(`(created_at, id) < (${param(search.after.createdAt)}, ${param(search.after.id)})`);
  }
  const limit = param(search.limit);
  const page = (clauses: string[]) =>
    `select * from runs${clauses.length > 0 ? ` where ${clauses.join(" and ")}` : ""} order by created_at desc, id desc limit ${limit}`;
  const perEnvironment =
    search.organizationId !== undefined && search.apiKeyId === undefined && !search.environment;
  const text = perEnvironment
    ? `select * from ((${page([...where, "environment = 'live'"])}) union all (${page([...where, "environment = 'test'"])})) r
       order by created_at desc, id desc limit ${limit}`
    : page(where);
  return { text, params };
}

export async function searchAllRuns(
  db: Database,
  search: T.AdminRunSearch,
): ReturnType<T.Store["searchAllRuns"]> {
  const { text, params } = searchAllRunsQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toRun);
}
