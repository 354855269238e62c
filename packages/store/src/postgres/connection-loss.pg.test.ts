/**
 * A Postgres server that drops the store's connections (a restart, a failover,
 * `pg_terminate_backend`): the call that lost its connection fails with a recognisable error or
 * is retried when that is safe, the next call works, the process lives, and a subscription
 * reconnects and says so.
 */
import pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { at, makeTenant, newRun } from "../contract/index.js";
import type { StoreEvent } from "../types.js";
import type { Database, Queryable } from "./database.js";
import { pgDatabase } from "./pg-database.js";
import { PostgresStore } from "./postgres-store.js";
import { DESTROY_TIMEOUT_MS, TEST_SERVER_URL, type TestDatabases, testDatabases } from "./test-databases.js";

let databases: TestDatabases;
let admin: pg.Pool;
const uncaught: unknown[] = [];
const record = (err: unknown) => uncaught.push(err);
const open: Database[] = [];

beforeAll(async () => {
  databases = await testDatabases();
  admin = new pg.Pool({ connectionString: TEST_SERVER_URL, max: 2 });
  process.on("uncaughtException", record);
  process.on("unhandledRejection", record);
});
beforeEach(() => {
  uncaught.length = 0;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close().catch(() => {})));
  await databases.cleanup();
  // Whatever a test did, it must not have taken the process down.
  expect(uncaught).toEqual([]);
});
afterAll(async () => {
  process.off("uncaughtException", record);
  process.off("unhandledRejection", record);
  await admin.end();
  await databases.destroy();
}, DESTROY_TIMEOUT_MS);

async function database() {
  const url = await databases.create();
  const db = pgDatabase(new pg.Pool({ connectionString: url, max: 4 }));
  open.push(db);
  return { db, url, name: new URL(url).pathname.slice(1) };
}

const pidOf = async (q: Queryable) =>
  (await q.query<{ pid: number }>("select pg_backend_pid() as pid")).rows[0]?.pid as number;

/** Terminates a backend and returns once it is gone and its goodbye has reached this process. */
async function terminate(pid: number) {
  await admin.query("select pg_terminate_backend($1)", [pid]);
  await vi.waitFor(
    async () => {
      const { rows } = await admin.query("select 1 from pg_stat_activity where pid = $1", [pid]);
      expect(rows).toHaveLength(0);
    },
    { timeout: 5000, interval: 10 },
  );
  await new Promise((resolve) => setImmediate(resolve));
}

/** The backend running a statement that starts with `prefix` (it is running once listed). */
async function backendRunning(prefix: string, database: string): Promise<number> {
  return vi.waitFor(
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = $1 and query like $2 and state = 'active'",
        [database, `${prefix}%`],
      );
      expect(rows).toHaveLength(1);
      return rows[0]?.pid as number;
    },
    { timeout: 5000, interval: 10 },
  );
}

const connectionLost = (committed: false | "unknown") => ({ code: "store_connection_lost", committed });

describe("a transaction whose connection is lost", () => {
  it("between its statements: is retried on a new connection, and the first try left nothing", async () => {
    const { db } = await database();
    await db.query("create table t (n int)");
    let tries = 0;
    const result = await db.transaction(async (tx) => {
      tries += 1;
      await tx.query("insert into t values ($1)", [tries]);
      if (tries === 1) await terminate(await pidOf(tx));
      await tx.query("insert into t values ($1)", [tries * 10]);
      return tries;
    });
    expect(result).toBe(2);
    const { rows } = await db.query<{ n: number }>("select n from t order by n");
    expect(rows.map((r) => r.n)).toEqual([2, 20]);
  });

  it("on every try: rejects with a connection-loss error (nothing committed), and the next call works", async () => {
    const { db } = await database();
    let tries = 0;
    await expect(
      db.transaction(async (tx) => {
        tries += 1;
        await terminate(await pidOf(tx));
        await tx.query("select 1");
      }),
    ).rejects.toMatchObject(connectionLost(false));
    expect(tries).toBeGreaterThan(1);
    expect(await db.transaction((tx) => tx.query<{ one: number }>("select 1 as one"))).toEqual(
      expect.objectContaining({ rows: [{ one: 1 }] }),
    );
  });

  it("during commit: rejects as 'unknown' and is not run again", async () => {
    const { db, name } = await database();
    // A deferred trigger that makes commit slow enough to be cut off.
    await db.query("create table c (n int)");
    await db.query(
      "create function slow() returns trigger language plpgsql as $$ begin perform pg_sleep(5); return null; end $$",
    );
    await db.query(
      "create constraint trigger slow after insert on c deferrable initially deferred for each row execute function slow()",
    );
    let tries = 0;
    const committing = db
      .transaction(async (tx) => {
        tries += 1;
        await tx.query("insert into c values (1)");
      })
      .catch((err: unknown) => err);
    await terminate(await backendRunning("commit", name));
    expect(await committing).toMatchObject(connectionLost("unknown"));
    expect(tries).toBe(1);
    expect((await db.query("select * from c")).rows).toEqual([]);
  });
});

describe("a statement whose connection is lost", () => {
  it("is retried when it only reads", async () => {
    const { db, name } = await database();
    const reading = db.query<{ one: number }>("select 1 as one from pg_sleep(0.3)");
    await terminate(await backendRunning("select 1 as one", name));
    expect((await reading).rows).toEqual([{ one: 1 }]);
  });

  it("rejects as 'unknown' when it writes, and the next call works", async () => {
    const { db, name } = await database();
    await db.query("create table w (n int)");
    const writing = db.query("insert into w select 1 from pg_sleep(0.3)").catch((err: unknown) => err);
    await terminate(await backendRunning("insert into w", name));
    expect(await writing).toMatchObject(connectionLost("unknown"));
    await db.query("insert into w values (2)");
    expect((await db.query("select n from w")).rows).toEqual([{ n: 2 }]);
  });

  it("runs on a new connection when the pooled ones were dropped while idle", async () => {
    const { db, name } = await database();
    await Promise.all([1, 2, 3].map(() => db.query("select pg_sleep(0.05)")));
    const { rows } = await admin.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = $1",
      [name],
    );
    expect(rows.length).toBeGreaterThan(0);
    for (const { pid } of rows) await terminate(pid);
    expect((await db.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
  });
});

describe("connections dropped as fast as they open", () => {
  it("fail calls, never the process, and the store answers once it stops", async () => {
    const url = await databases.create();
    const name = new URL(url).pathname.slice(1);
    // Connections closed as soon as they are idle, so every call opens a new one.
    const pool = new pg.Pool({ connectionString: url, max: 4, idleTimeoutMillis: 1 });
    const db = pgDatabase(pool);
    open.push(db);
    let opened = 0;
    pool.on("connect", () => opened++);
    const until = Date.now() + 2000;
    const outcomes = { ok: 0, lost: 0 };
    const callers = Array.from({ length: 4 }, async () => {
      while (Date.now() < until) {
        await db.query("select 1").then(
          () => outcomes.ok++,
          (err: unknown) => {
            expect(err).toMatchObject({ code: "store_connection_lost" });
            outcomes.lost++;
          },
        );
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
    const terminator = (async () => {
      while (Date.now() < until) {
        await admin.query("select pg_terminate_backend(pid) from pg_stat_activity where datname = $1", [
          name,
        ]);
      }
    })();
    await Promise.all([...callers, terminator]);
    expect(opened).toBeGreaterThan(30);
    expect(outcomes.ok + outcomes.lost).toBeGreaterThan(0);
    expect((await db.query("select 1 as one")).rows).toEqual([{ one: 1 }]);
  });
});

describe("a subscription whose connection is lost", () => {
  it("says it is reconnecting, reconnects with backoff, and delivers notifications again", async () => {
    const { url, name } = await database();
    const listening = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max: 2 })));
    const writing = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max: 2 })));
    const heard: StoreEvent[] = [];
    const unsubscribe = await listening.subscribe((event) => heard.push(event));
    try {
      const tenant = await makeTenant(writing, { balance: 10_000_000 });
      const listener = await backendListening(name);
      // Refuse new connections for a while: the subscription keeps trying, and says so.
      await admin.query(`alter database ${name} allow_connections false`);
      await terminate(listener);
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "subscription", state: "reconnecting" }), {
        timeout: 5000,
      });
      // A while down (a few failed tries at 100, 200, 400 ms): still reconnecting.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(heard).not.toContainEqual({ kind: "subscription", state: "ok" });

      await admin.query(`alter database ${name} allow_connections true`);
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "subscription", state: "ok" }), {
        timeout: 10_000,
      });
      const before = heard.length;
      await writing.admitRun({ run: newRun(tenant), now: at(0) });
      await vi.waitFor(() => expect(heard.slice(before)).toContainEqual({ kind: "queued" }), {
        timeout: 5000,
      });
    } finally {
      await admin.query(`alter database ${name} allow_connections true`);
      await unsubscribe();
      await listening.close();
      await writing.close();
    }
  });

  it("stops reconnecting once unsubscribed", async () => {
    const { url, name } = await database();
    const listening = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max: 1 })));
    const heard: StoreEvent[] = [];
    const unsubscribe = await listening.subscribe((event) => heard.push(event));
    try {
      const listener = await backendListening(name);
      await terminate(listener);
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "subscription", state: "ok" }), {
        timeout: 5000,
      });
      await unsubscribe();
      await vi.waitFor(
        async () => {
          const { rows } = await admin.query(
            "select 1 from pg_stat_activity where datname = $1 and query like 'listen %'",
            [name],
          );
          expect(rows).toHaveLength(0);
        },
        { timeout: 5000, interval: 10 },
      );
    } finally {
      await listening.close();
    }
  });
});

async function backendListening(database: string): Promise<number> {
  return vi.waitFor(
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        "select pid from pg_stat_activity where datname = $1 and query like 'listen %'",
        [database],
      );
      expect(rows).toHaveLength(1);
      return rows[0]?.pid as number;
    },
    { timeout: 5000, interval: 10 },
  );
}
