/**
 * The small query interface PostgresStore runs on, with two drivers: `pg` against a Postgres
 * server, and embedded PGlite. One SQL implementation serves both.
 */
import type { PGlite } from "@electric-sql/pglite";
import type { Pool } from "pg";

export interface Queryable {
  query<R = Record<string, unknown>>(text: string, params?: unknown[]): Promise<{ rows: R[] }>;
}

export interface Database extends Queryable {
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
    close: () => pool.end(),
  };
}

export function pgliteDatabase(db: PGlite): Database {
  return {
    query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await db.query(text, params)),
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async <R>(text: string, params?: unknown[]) => rowsOf<R>(await tx.query(text, params)) }),
      ),
    close: () => db.close(),
  };
}
