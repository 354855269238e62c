/**
 * The small query interface PostgresStore runs on, with two drivers: `pg` against a Postgres
 * server, and embedded PGlite. One SQL implementation serves both.
 */
import type { PGlite } from "@electric-sql/pglite";
import pg, { type Pool } from "pg";

export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

export interface Database extends Queryable {
  /** Calls `fn` with the payload of every NOTIFY on `channel`, from any process; resolves to an unsubscribe. */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Rows come back untyped from the driver; each query names the shape it selects. */
const rowsOf = <R>(result: { rows: unknown[] }) => result as { rows: R[] };

export function pgDatabase(pool: Pool): Database {
  // An idle connection that the server drops (restart, failover) must not crash the process;
  // the pool replaces it and the next query reports any lasting problem.
  pool.on("error", () => {});
  return {
    query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await pool.query(text, params)),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn({
          query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await client.query(text, params)),
        });
        await client.query("commit");
        return result;
      } catch (err) {
        await client.query("rollback").catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    async listen(channel, fn) {
      // LISTEN needs a connection of its own, outside the pool.
      const client = new pg.Client(pool.options);
      client.on("error", () => {}); // a dropped listener only delays wake-ups; loops also poll
      client.on("notification", (message) => {
        if (message.channel === channel) fn(message.payload ?? "");
      });
      await client.connect();
      await client.query(`listen ${quoteIdent(channel)}`);
      return async () => {
        await client.end().catch(() => {});
      };
    },
    close: () => pool.end(),
  };
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;

export function pgliteDatabase(db: PGlite): Database {
  return {
    query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await db.query(text, params)),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await tx.query(text, params)) }),
      ),
    listen: async (channel, fn) => {
      const unsubscribe = await db.listen(channel, fn);
      return async () => unsubscribe();
    },
    close: () => db.close(),
  };
}
