/**
 * Numbered SQL migrations (`migrations/000001_initial.sql`, …), applied in order, each once, in a
 * transaction, under an advisory lock so that processes starting together do not race.
 */
import { readdir, readFile } from "node:fs/promises";
import type { Database } from "./database.js";

const MIGRATIONS_DIR = new URL("../../src/postgres/migrations/", import.meta.url);
const LOCK_ID = 727_000_001;

/**
 * Applies every migration not applied yet; the names of those applied. `through` stops after the
 * migration with that number (tests of an upgrade start from an older schema).
 */
export async function migrate(db: Database, options: { through?: string } = {}): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR))
    .filter((f) => /^\d{6}_.+\.sql$/.test(f) && (!options.through || f.slice(0, 6) <= options.through))
    .sort();
  return db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [LOCK_ID]);
    await tx.query(
      "create table if not exists refvid_migrations (name text primary key, applied_at timestamptz not null default now())",
    );
    const done = new Set(
      (await tx.query<{ name: string }>("select name from refvid_migrations")).rows.map((r) => r.name),
    );
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(new URL(file, MIGRATIONS_DIR), "utf8");
      for (const statement of splitStatements(sql)) await tx.query(statement);
      await tx.query("insert into refvid_migrations (name) values ($1)", [file]);
      applied.push(file);
    }
    return applied;
  });
}

/**
 * Splits a migration on `;` at line ends, outside `$$` bodies (a function's body is one statement
 * however many `;` it holds); migrations keep to plain DDL and such functions, so this suffices.
 */
function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = "";
  let inBody = false;
  for (const line of sql.split("\n")) {
    current += `${line}\n`;
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && /;\s*$/.test(line)) {
      statements.push(current.replace(/;\s*$/, ""));
      current = "";
    }
  }
  statements.push(current);
  return statements.map((s) => s.replace(/^\s*--.*$/gm, "").trim()).filter(Boolean);
}
