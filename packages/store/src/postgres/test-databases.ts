/**
 * Fresh databases for tests (each test gets a fresh database cloned from a migrated
 * template). Used by the store's own tests and by the server's end-to-end tests.
 *
 * With `REFVID_TEST_POOLER_URL` (a PgBouncer in front of the test server, see
 * `scripts/pgbouncer/test.sh`), the URLs handed out go through the pooler: only its host, port,
 * user and password are taken, the database name stays. Databases are still made, migrated and
 * dropped over the direct URL: `CREATE DATABASE … TEMPLATE` refuses a template the pooler keeps a
 * connection to.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { migrate } from "./migrate.js";
import { pgDatabase } from "./pg-database.js";
import { PostgresStore } from "./postgres-store.js";

/** The server tests run against: `REFVID_TEST_DATABASE_URL`, else the local one CI starts. */
export const TEST_SERVER_URL =
  process.env.REFVID_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

/** A pooler in front of TEST_SERVER_URL that tests reach the server through, or undefined. */
export const TEST_POOLER_URL = process.env.REFVID_TEST_POOLER_URL || undefined;

/**
 * What a test hook that calls `destroy` should allow it. Each drop waits for a checkpoint of the
 * whole server, and on a busy machine one checkpoint has taken 45 s.
 */
export const DESTROY_TIMEOUT_MS = 180_000;

export interface TestDatabases {
  /** A new, migrated, empty database; its URL (through the pooler, when there is one). */
  create(): Promise<string>;
  /** A PostgresStore on a new database. */
  store(): Promise<PostgresStore>;
  /** Another PostgresStore on the database at `url`, as another process would open it. */
  storeAt(url: string, options?: { max?: number }): PostgresStore;
  /**
   * The environment a refvid process opens the database at `url` (from `create`) with:
   * `DATABASE_URL`, and behind the pooler `DATABASE_LISTEN_URL` (the direct URL, since LISTEN needs
   * a session of its own) and `REFVID_PG_PREPARED_STATEMENTS=false`.
   */
  env(url: string): Record<string, string>;
  /**
   * Closes every store handed out, and drops every database made in the background: a drop waits
   * for a checkpoint of the whole server (Postgres 15), seconds on a busy one, so a test that made
   * forty databases (the invariants property makes one a run) does not spend its hook's time on
   * them. `destroy` waits for the drops.
   */
  cleanup(): Promise<void>;
  /** Cleans up, waits for every drop (failing with the first that failed), drops the template. */
  destroy(): Promise<void>;
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

/** `url` with the host, port, user and password of `server`: the same database on another server. */
const onServer = (url: string, server: string) => {
  const u = new URL(url);
  const s = new URL(server);
  u.host = s.host;
  u.username = s.username;
  u.password = s.password;
  return u.toString();
};

export async function testDatabases(serverUrl = TEST_SERVER_URL): Promise<TestDatabases> {
  // Creates and drops go by pools of their own. A drop waits for a checkpoint, which on a busy
  // machine has taken 45 s; a create (WAL_LOG, Postgres 15's default) waits for none, and must
  // not queue behind the drops for a connection. The drops' few connections share a checkpoint.
  const admin = new pg.Pool({ connectionString: serverUrl, max: 2 });
  const dropper = new pg.Pool({ connectionString: serverUrl, max: 4 });
  const prefix = `refvid_test_${process.pid}_${randomBytes(3).toString("hex")}`;
  const template = `${prefix}_template`;
  await admin.query(`create database ${template}`);
  const templateDb = pgDatabase(new pg.Pool({ connectionString: withDatabase(serverUrl, template), max: 1 }));
  await migrate(templateDb);
  await templateDb.close();

  const pooler = TEST_POOLER_URL;
  const direct = (url: string) => (pooler ? onServer(url, serverUrl) : url);
  const made: string[] = [];
  const stores: PostgresStore[] = [];
  // Never a name used before: a pooler that knew the dropped database refuses logins to it for a
  // while (PgBouncer's server_login_retry), and a new database of the same name would inherit that.
  let count = 0;
  const create = async () => {
    const name = `${prefix}_${count++}`;
    await admin.query(`create database ${name} template ${template}`);
    made.push(name);
    const url = withDatabase(serverUrl, name);
    return pooler ? onServer(url, pooler) : url;
  };
  const storeAt = (url: string, max: number) => {
    const pool = new pg.Pool({ connectionString: url, max });
    // As refvid opens it with the environment `env` gives.
    const store = new PostgresStore(
      pgDatabase(pool, pooler ? { listenUrl: direct(url), preparedStatements: false } : {}),
    );
    stores.push(store);
    return store;
  };
  const dropping: Promise<void>[] = [];
  const failedDrops: unknown[] = [];
  const cleanup = async () => {
    await Promise.all(stores.splice(0).map((s) => s.close().catch(() => {})));
    for (const name of made.splice(0)) {
      const drop = dropper.query(`drop database if exists ${name} with (force)`);
      dropping.push(
        drop.then(
          () => undefined,
          (err: unknown) => void failedDrops.push(err),
        ),
      );
    }
  };
  return {
    create,
    async store() {
      return storeAt(await create(), 8);
    },
    storeAt: (url, options = {}) => storeAt(url, options.max ?? 2),
    env: (url): Record<string, string> =>
      pooler
        ? { DATABASE_URL: url, DATABASE_LISTEN_URL: direct(url), REFVID_PG_PREPARED_STATEMENTS: "false" }
        : { DATABASE_URL: url },
    cleanup,
    async destroy() {
      await cleanup();
      await Promise.all(dropping.splice(0));
      await admin.query(`drop database if exists ${template} with (force)`);
      await Promise.all([admin.end(), dropper.end()]);
      if (failedDrops.length > 0) throw failedDrops[0];
    },
  };
}
