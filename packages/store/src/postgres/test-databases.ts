/**
 * Fresh databases for tests (each test gets a fresh database cloned from a migrated
 * template). Used by the store's own tests and by the server's end-to-end tests.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "./migrate.js";
import { pgDatabase } from "./pg-database.js";
import { PostgresStore } from "./postgres-store.js";

/** The server tests run against: `REFVID_TEST_DATABASE_URL`, else the local one CI starts. */
export const TEST_SERVER_URL =
  process.env.REFVID_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabases {
  /** A new, migrated, empty database; its URL. */
  create(): Promise<string>;
  /** A PostgresStore on a new database. */
  store(): Promise<PostgresStore>;
  /** Another PostgresStore on the database at `url`, as another process would open it. */
  storeAt(url: string, options?: { max?: number }): PostgresStore;
  /** Closes every store handed out and drops every database made. */
  cleanup(): Promise<void>;
  destroy(): Promise<void>;
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

export async function testDatabases(serverUrl = TEST_SERVER_URL): Promise<TestDatabases> {
  const admin = new pg.Pool({ connectionString: serverUrl, max: 2 });
  const prefix = `refvid_test_${process.pid}_${randomBytes(3).toString("hex")}`;
  const template = `${prefix}_template`;
  await admin.query(`create database ${template}`);
  const templateDb = pgDatabase(new pg.Pool({ connectionString: withDatabase(serverUrl, template), max: 1 }));
  await migrate(templateDb);
  await templateDb.close();

  const made: string[] = [];
  const stores: PostgresStore[] = [];
  const create = async () => {
    const name = `${prefix}_${made.length}`;
    await admin.query(`create database ${name} template ${template}`);
    made.push(name);
    return withDatabase(serverUrl, name);
  };
  const storeAt = (url: string, max: number) => {
    const store = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max })));
    stores.push(store);
    return store;
  };
  const cleanup = async () => {
    await Promise.all(stores.splice(0).map((s) => s.close().catch(() => {})));
    for (const name of made.splice(0)) await admin.query(`drop database if exists ${name} with (force)`);
  };
  return {
    create,
    async store() {
      return storeAt(await create(), 8);
    },
    storeAt: (url, options = {}) => storeAt(url, options.max ?? 2),
    cleanup,
    async destroy() {
      await cleanup();
      await admin.query(`drop database if exists ${template} with (force)`);
      await admin.end();
    },
  };
}
