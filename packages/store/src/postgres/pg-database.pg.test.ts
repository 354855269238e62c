/**
 * What `pgDatabase` does differently behind a pooler in transaction mode (docs/pgbouncer.md):
 * statements go unnamed when prepared statements are off, LISTEN goes to a URL of its own, and a
 * named statement that meets a server connection it was not prepared for says what to set.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { Database } from "./database.js";
import { type PgDatabaseOptions, pgDatabase } from "./pg-database.js";
import { type TestDatabases, testDatabases } from "./test-databases.js";

let databases: TestDatabases;
const open: Database[] = [];
beforeAll(async () => {
  databases = await testDatabases();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  await databases.cleanup();
});
afterAll(async () => databases.destroy());

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
    const [poolUrl, listenUrl] = [await databases.create(), await databases.create()];
    const db = await database({ listenUrl }, poolUrl);
    const heard: string[] = [];
    const unlisten = await db.listen("refvid_test", (payload) => heard.push(payload));
    try {
      // Notifications stay in their database: only the listen URL's is heard.
      await db.query("select pg_notify('refvid_test', 'on the pool database')");
      const other = await database({}, listenUrl);
      await other.query("select pg_notify('refvid_test', 'on the listen database')");
      await vi.waitFor(() => expect(heard).toContain("on the listen database"), { timeout: 5000 });
      expect(heard).toEqual(["on the listen database"]);
    } finally {
      await unlisten();
    }
  });
});
