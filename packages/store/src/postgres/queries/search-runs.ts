import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toRun } from "../rows.js";
import { json } from "./sql.js";

/**
 * The statement a search sends: newest first by `(created_at, id)`, keyset paging after a cursor.
 * Exported so the benchmark EXPLAINs exactly this statement.
 */
export function searchRunsQuery(search: T.RunSearch): { text: string; params: unknown[] } {
  const where = ["organization_id = $1", "environment = $2"];
  const params: unknown[] = [search.organizationId, search.environment];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (search.statuses) add((p) => `status = any(${p}::text[])`, search.statuses);
  if (search.endpoint) add((p) => `endpoint = ${p}`, search.endpoint);
  // Through `runs_by_api_key`: one key's runs are all of one organization and environment.
  if (search.apiKeyId !== undefined) add((p) => `api_key_id = ${p}`, search.apiKeyId);
  if (search.createdAfter) add((p) => `created_at >= ${p}`, search.createdAfter);
  if (search.createdBefore) add((p) => `created_at < ${p}`, search.createdBefore);
  if (search.metadata) add((p) => `metadata @> ${p}::jsonb`, json(search.metadata));
  // Through `runs_videos`, whose predicate this repeats.
  if (search.videos) where.push("video is not null and video_deleted_at is null");
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    const beyond = search.oldestFirst ? ">" : "<";
    where.push(`(created_at, id) ${beyond} ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const order = search.oldestFirst ? "created_at, id" : "created_at desc, id desc";
  const text = `select * from runs where ${where.join(" and ")} order by ${order} limit $${params.length}`;
  return { text, params };
}

export async function searchRuns(db: Database, search: T.RunSearch): ReturnType<T.Store["searchRuns"]> {
  const { text, params } = searchRunsQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toRun);
}
