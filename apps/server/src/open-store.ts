/**
 * Opens the configured store (DESIGN.md, "Stores and scale"): a Postgres server when
 * DATABASE_URL is set, else embedded PGlite in a directory (the durable default), else memory.
 * Postgres stores are migrated before use.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { MemoryStore, migrate, PostgresStore, pgDatabase, pgliteDatabase, type Store } from "@refvid/store";
import pg from "pg";
import type { StoreConfig } from "./config.js";

export async function openStore(config: StoreConfig): Promise<Store> {
  switch (config.kind) {
    case "memory":
      return new MemoryStore();
    case "postgres": {
      const db = pgDatabase(new pg.Pool({ connectionString: config.url, max: 10 }));
      await migrate(db);
      return new PostgresStore(db);
    }
    case "pglite": {
      const dir = resolve(config.dir);
      await mkdir(dir, { recursive: true });
      const db = pgliteDatabase(new PGlite(dir));
      await migrate(db);
      return new PostgresStore(db);
    }
  }
}
