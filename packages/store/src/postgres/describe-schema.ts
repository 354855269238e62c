/**
 * A canonical text description of a database's schema (tables, unlogged or not, columns, constraints, indexes),
 * independent of pg_dump's version, so a committed copy can be compared in CI.
 */
import type { Queryable } from "./database.js";

export async function describeSchema(db: Queryable): Promise<string> {
  const columns = await db.query<{
    table_name: string;
    column_name: string;
    data_type: string;
    is_nullable: string;
    column_default: string | null;
  }>(
    `select table_name, column_name, data_type, is_nullable, column_default from information_schema.columns
     where table_schema = 'public' order by table_name, ordinal_position`,
  );
  const constraints = await db.query<{ table_name: string; name: string; definition: string }>(
    `select c.conrelid::regclass::text as table_name, c.conname as name, pg_get_constraintdef(c.oid) as definition
     from pg_constraint c join pg_namespace n on n.oid = c.connamespace where n.nspname = 'public'
     order by 1, 2`,
  );
  const unlogged = await db.query<{ relname: string }>(
    `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'public' and c.relkind = 'r' and c.relpersistence = 'u'`,
  );
  const isUnlogged = new Set(unlogged.rows.map((r) => r.relname));
  const indexes = await db.query<{ indexdef: string }>(
    "select indexdef from pg_indexes where schemaname = 'public' order by tablename, indexname",
  );
  const lines = [
    "-- DO NOT EDIT. The schema the migrations produce; CI checks it (REFVID_UPDATE_SCHEMA=1 rewrites it).",
    "",
  ];
  let table = "";
  for (const c of columns.rows) {
    if (c.table_name !== table) {
      table = c.table_name;
      lines.push(`${isUnlogged.has(table) ? "unlogged table" : "table"} ${table}`);
    }
    const nullable = c.is_nullable === "YES" ? "" : " not null";
    const fallback = c.column_default ? ` default ${c.column_default}` : "";
    lines.push(`  ${c.column_name} ${c.data_type}${nullable}${fallback}`);
  }
  lines.push("");
  for (const c of constraints.rows) lines.push(`constraint ${c.table_name}.${c.name}: ${c.definition}`);
  lines.push("");
  for (const i of indexes.rows) lines.push(i.indexdef);
  return `${lines.join("\n")}\n`;
}
