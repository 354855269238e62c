/**
 * Opens the configured store: a Postgres server when
 * DATABASE_URL is set, else embedded PGlite in a directory (the durable default), else memory.
 * Postgres stores are migrated before use; a PGlite directory is locked to this process.
 *
 * Migrations run over DATABASE_URL even behind PgBouncer in transaction mode: they are one
 * transaction under a transaction-scoped advisory lock (docs/pgbouncer.md).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { MemoryStore, migrate, PostgresStore, pgDatabase, pgliteDatabase, type Store } from "@refvid/store";
import pg from "pg";
import type { StoreConfig } from "./config.js";
import { lockDirectory } from "./pglite-lock.js";

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case "memory":
      return new MemoryStore();
    case "postgres": {
      const db = pgDatabase(new pg.Pool({ connectionString: config.url, max: config.poolSize }), {
        listenUrl: config.listenUrl,
        preparedStatements: config.preparedStatements,
      });
      await migrate(db);
      return new PostgresStore(db);
    }
    case "pglite": {
      const dir = resolve(config.dir);
      await mkdir(dir, { recursive: true });
      const release = await lockDirectory(dir);
      try {
        const db = pgliteDatabase(new PGlite(dir));
        const close = async () => {
          try {
            await db.close();
          } finally {
            await release();
          }
        };
        await migrate(db).catch(async (err: unknown) => {
          await db.close().catch(() => {});
          throw err;
        });
        return new PostgresStore({ ...db, close });
      } catch (err) {
        await release();
        throw err;
      }
    }
  }
}
