import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

/**
 * Newest first through `organizations_list`, keyset paging after a cursor; a name prefix is a
 * filter on that walk. Exported so a test EXPLAINs exactly this statement.
 */
export function listOrganizationsQuery(search: T.OrganizationSearch): { text: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (search.namePrefix !== undefined) {
    params.push(search.namePrefix);
    where.push(`starts_with(name, $${params.length})`);
  }
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const filter = where.length > 0 ? `where ${where.join(" and ")} ` : "";
  const text = `select * from organizations ${filter}order by created_at desc, id desc limit $${params.length}`;
  return { text, params };
}

export async function listOrganizations(
  db: Database,
  search: T.OrganizationSearch,
): ReturnType<T.Store["listOrganizations"]> {
  const { text, params } = listOrganizationsQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toOrganization);
}
