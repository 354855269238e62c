import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toTopUp } from "../rows.js";

/** One organization's top-ups newest first through `top_ups_list`. Exported so a test EXPLAINs it. */
export function listTopUpsQuery(search: T.TopUpSearch): { text: string; params: unknown[] } {
  const where = ["organization_id = $1"];
  const params: unknown[] = [search.organizationId];
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const text = `select * from top_ups where ${where.join(" and ")} order by created_at desc, id desc limit $${params.length}`;
  return { text, params };
}

export async function listTopUps(db: Database, search: T.TopUpSearch): ReturnType<T.Store["listTopUps"]> {
  const { text, params } = listTopUpsQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toTopUp);
}
