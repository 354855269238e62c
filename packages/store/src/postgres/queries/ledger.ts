import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toAuditEntry, toLedgerEntry } from "../rows.js";
import { audit } from "./add-top-up.js";

/**
 * Ledger entries newest first by id (the order the wallet moved in), through `ledger_by_key` with a
 * key, else `ledger_by_organization` or the primary key. A page continues after its last id.
 */
export function listLedgerQuery(search: T.LedgerSearch): { text: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (search.organizationId !== undefined) add((n) => `organization_id = ${n}`, search.organizationId);
  if (search.apiKeyId !== undefined) add((n) => `api_key_id = ${n}`, search.apiKeyId);
  if (search.runId !== undefined) add((n) => `run_id = ${n}`, search.runId);
  if (search.kinds !== undefined) add((n) => `kind = any(${n}::text[])`, search.kinds);
  if (search.from !== undefined) add((n) => `created_at >= ${n}`, search.from);
  if (search.to !== undefined) add((n) => `created_at < ${n}`, search.to);
  if (search.after) add((n) => `id < ${n}`, search.after.id);
  params.push(search.limit);
  const filter = where.length > 0 ? `where ${where.join(" and ")}` : "";
  return {
    text: `select * from ledger_entries ${filter} order by id desc limit $${params.length}`,
    params,
  };
}

export async function listLedger(db: Database, search: T.LedgerSearch): ReturnType<T.Store["listLedger"]> {
  const { text, params } = listLedgerQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toLedgerEntry);
}

export async function recordAudit(db: Database, entry: T.NewAuditEntry): ReturnType<T.Store["recordAudit"]> {
  return audit(db, entry);
}

export async function listAudit(db: Database, search: T.AuditSearch): ReturnType<T.Store["listAudit"]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (search.organizationId !== undefined) {
    params.push(search.organizationId);
    where.push(`organization_id = $${params.length}`);
  }
  if (search.actor !== undefined) {
    params.push(search.actor);
    where.push(`actor = $${params.length}`);
  }
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(created_at, id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const filter = where.length > 0 ? `where ${where.join(" and ")}` : "";
  const { rows } = await db.query(
    `select * from audit_log ${filter} order by created_at desc, id desc limit $${params.length}`,
    params,
  );
  return rows.map(toAuditEntry);
}
