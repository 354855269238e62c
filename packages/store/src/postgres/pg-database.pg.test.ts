/**
 * What `pgDatabase` does differently behind a pooler in transaction mode (docs/pgbouncer.md):
 * statements go unnamed when prepared statements are off, LISTEN goes to a URL of its own, and a
 * named statement that meets a server connection it was not prepared for says what to set.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "./database.js";
import { type PgDatabaseOptions, pgDatabase } from "./pg-database.js";
import { DESTROY_TIMEOUT_MS, type TestDatabases, testDatabases } from "./test-databases.js";

let databases: TestDatabases;
const open: Database[] = [];
beforeAll(async () => {
  databases = await testDatabases();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  await databases.cleanup();
});
afterAll(async () => databases.destroy(), DESTROY_TIMEOUT_MS);

/** A database on one connection, so that what a statement left on it can be looked at. */
async function database(options: PgDatabaseOptions = {}, url?: string) {
  const connectionString = url ?? (await databases.create());
  const db = pgDatabase(new pg.Pool({ connectionString, max: 1 }), options);
  open.push(db);
  return db;
}

const prepared = async (db: Database) =>
  (await db.query<{ name: string }>("select name from pg_prepared_statements order by name")).rows.map(
    (r) => r.name,
  );

describe("named statements", () => {
  it.each<[string, { given: PgDatabaseOptions; want: string[] }]>([
    ["are prepared on their connection by default", { given: {}, want: ["refvid_one", "refvid_two"] }],
    ["go unnamed with prepared statements off", { given: { preparedStatements: false }, want: [] }],
  ])("%s", async (_name, { given, want }) => {
    const db = await database(given);
    for (const n of [1, 2]) {
      expect((await db.query("select $1::int as n", [n], "refvid_one")).rows).toEqual([{ n }]);
      const inTransaction = await db.transaction((tx) => tx.query("select $1::int as n", [n], "refvid_two"));
      expect(inTransaction.rows).toEqual([{ n }]);
    }
    expect(await prepared(db)).toEqual(want);
  });

  it("name the setting in the error when the connection holds another statement of that name", async () => {
    const db = await database();
    // What a pooler in transaction mode does: another client prepared it on this server connection.
    await db.query("prepare refvid_taken as select 2");
    await expect(db.query("select 1", [], "refvid_taken")).rejects.toThrow(
      /"refvid_taken" already exists \(.*REFVID_PG_PREPARED_STATEMENTS=false/,
    );
    await expect(db.transaction((tx) => tx.query("select 1", [], "refvid_taken"))).rejects.toThrow(
      /REFVID_PG_PREPARED_STATEMENTS=false/,
    );
  });
});

describe("LISTEN", () => {
  it("goes to listenUrl when one is given, while statements go through the pool", async () => {
    const url = await databases.create();
    const listenUrl = `${url}?application_name=refvid_listen`;
    const db = await database({ listenUrl }, url);
    const heard: string[] = [];
    const unlisten = await db.listen("refvid_test", (payload) => heard.push(payload));
    try {
      await db.query("select pg_notify('refvid_test', 'hello')");
      await vi.waitFor(() => expect(heard).toEqual(["hello"]), { timeout: 5000 });
      const { rows } = await db.query<{ name: string; listens: boolean }>(
        `select application_name as name, pid <> pg_backend_pid() as listens from pg_stat_activity
         where datname = current_database() and backend_type = 'client backend' order by 2`,
      );
      expect(rows).toEqual([
        { name: "", listens: false },
        { name: "refvid_listen", listens: true },
      ]);
    } finally {
      await unlisten();
    }
  });

  it("refuses to start where a NOTIFY sent through the pool is not heard, and says what to set", async () => {
    // As behind PgBouncer in transaction mode with LISTEN through it too: nothing comes back. Here
    // the two URLs lead to different databases, whose notifications never meet.
    const db = await database({ listenUrl: await databases.create() });
    await expect(db.listen("refvid_test", () => {})).rejects.toThrow(
      /LISTEN heard no NOTIFY sent through the pool within 5 s\. .*set DATABASE_LISTEN_URL/,
    );
  });
});
