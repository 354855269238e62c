/**
 * The `pg` driver of Database, against a Postgres server.
 *
 * A connection the server drops (restart, failover, `pg_terminate_backend`) fails only the call
 * it carried, with a `ConnectionLostError`, and the pool replaces it. A call is retried on a new
 * connection when that cannot apply a write twice: a read, a transaction cut off before its
 * commit was sent, or any call that could not get a connection at all. LISTEN is pg-listen.ts.
 *
 * Behind a pooler in transaction mode (PgBouncer, docs/pgbouncer.md) every transaction may run on
 * another server connection: LISTEN then needs a direct connection of its own (`listenUrl`), and
 * named statements must be off (`preparedStatements: false`). A subscription checks at its start
 * that a NOTIFY sent through the pool reaches its LISTEN, so a LISTEN that went through such a
 * pooler too fails there rather than leave every process deaf to the others.
 */
import type { Pool, PoolClient } from "pg";
import { ConnectionLostError, type Database, type Queryable, rowsOf } from "./database.js";
import { listenWithReconnect } from "./pg-listen.js";

/** Waits before each retry of a call that lost its connection; then it fails. */
const RETRY_DELAYS_MS = [20, 100, 300];
const SOCKET_ERRORS = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Errors that mean the connection is gone (or never came), not that the statement was wrong. */
function isConnectionError(err: unknown): boolean {
  if (err instanceof ConnectionLostError) return true;
  if (!(err instanceof Error)) return false;
  const code = String((err as { code?: unknown }).code ?? "");
  // Class 08: connection exception; 57P01-57P03: the server is shutting down or starting.
  if (code.startsWith("08") || ["57P01", "57P02", "57P03"].includes(code) || SOCKET_ERRORS.has(code))
    return true;
  return /Connection terminated|not queryable|timeout exceeded when trying to connect/i.test(err.message);
}

/** How the store reaches Postgres besides its pool; the defaults suit a direct connection. */
export interface PgDatabaseOptions {
  /**
   * Where the LISTEN connection goes (a URL; the pool's other settings apply). LISTEN lasts as
   * long as its session, so behind a pooler in transaction mode it must reach Postgres directly.
   * Default: where the pool goes.
   */
  listenUrl?: string;
  /**
   * false: every statement goes unnamed, parsed on each call. A named statement is prepared on
   * the server connection it first ran on; a pooler in transaction mode that does not track them
   * (PgBouncer before 1.21) sends the next call to another one. Default true.
   */
  preparedStatements?: boolean;
}

/** Errors of a named statement run on a server connection other than the one it was prepared on. */
const PREPARED_STATEMENT_ERRORS = new Set(["26000", "42P05"]);
const PREPARED_STATEMENT_HINT =
  " (is DATABASE_URL a pooler in transaction mode? Turn prepared statements off: REFVID_PG_PREPARED_STATEMENTS=false, docs/pgbouncer.md)";

/** Says what to do about a prepared statement the pooler lost, in the error the caller gets. */
function withPoolerHint(err: unknown, name: string | undefined): unknown {
  if (name && err instanceof Error && PREPARED_STATEMENT_ERRORS.has(String((err as { code?: unknown }).code)))
    err.message += PREPARED_STATEMENT_HINT;
  return err;
}

/** A statement that only reads: the store's writes are insert/update/delete, or in a transaction. */
const isRead = (text: string) => /^\s*select\b/i.test(text);

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A deadlock or a serialization failure: the server rolled the whole statement or transaction back,
 * so running it again cannot write anything twice.
 */
const ROLLED_BACK = new Set(["40P01", "40001"]);
const rolledBack = (err: unknown) =>
  err instanceof Error && ROLLED_BACK.has(String((err as { code?: unknown }).code));

/**
 * Runs `once` again after a lost connection while nothing can have been written twice, or after the
 * server rolled it back (a deadlock between transactions that took rows in different orders).
 */
async function withRetries<T>(once: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await once();
    } catch (err) {
      const delay = RETRY_DELAYS_MS[attempt];
      const retriable = (err instanceof ConnectionLostError && err.committed === false) || rolledBack(err);
      if (!retriable || delay === undefined) throw err;
      await pause(delay * (0.5 + Math.random()));
    }
  }
}

/**
 * A pooled connection. Its first error is remembered from the moment it connects: a server that
 * drops it while it is checked out (when the pool no longer listens for its errors) would
 * otherwise raise an 'error' event nobody hears, which ends the process.
 */
async function checkOut(pool: Pool, failures: WeakMap<object, unknown>, prepared: boolean) {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw new ConnectionLostError(false, err, true);
  }
  return {
    get lost() {
      return failures.get(client);
    },
    query(text: string, params?: unknown[], name?: string) {
      // Known to be gone: the statement is not sent.
      const lost = failures.get(client);
      if (lost !== undefined) return Promise.reject(new ConnectionLostError(false, lost));
      if (!name || !prepared) return client.query(text, params);
      return client.query({ name, text, values: params ?? [] }).catch((err: unknown) => {
        throw withPoolerHint(err, name);
      });
    },
    /** Back to the pool; a connection that failed is closed instead. */
    release(failed: boolean) {
      const lost = failures.get(client);
      client.release(lost instanceof Error ? lost : failed || lost !== undefined ? true : undefined);
    },
  };
}

/** A store on `pool`, a new pool (its connections are watched from the moment they connect). */
export function pgDatabase(pool: Pool, options: PgDatabaseOptions = {}): Database {
  const prepared = options.preparedStatements ?? true;
  const listenConfig = options.listenUrl
    ? { ...pool.options, connectionString: options.listenUrl }
    : pool.options;
  // An idle connection that the server drops must not crash the process; the pool replaces it.
  pool.on("error", () => {});
  // Listening from connect on, not from check-out: the server's goodbye can arrive in the same
  // read as the connection's first "ready", before whoever asked for the connection gets it.
  const failures = new WeakMap<object, unknown>();
  pool.on("connect", (client) => {
    client.on("error", (err) => {
      if (!failures.has(client)) failures.set(client, err);
    });
  });

  const queryOnce = async (text: string, params?: unknown[], name?: string) => {
    const conn = await checkOut(pool, failures, prepared);
    let failed = false;
    try {
      return await conn.query(text, params, name);
    } catch (err) {
      if (err instanceof ConnectionLostError) failed = true;
      else if (conn.lost !== undefined || isConnectionError(err)) {
        failed = true;
        throw new ConnectionLostError(isRead(text) ? false : "unknown", err);
      }
      throw err;
    } finally {
      conn.release(failed);
    }
  };

  const transactionOnce = async <T>(fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const conn = await checkOut(pool, failures, prepared);
    let committing = false;
    let failed = false;
    try {
      await conn.query("begin");
      const result = await fn({
        query: async <R>(text: string, params?: unknown[], name?: string) =>
          rowsOf<R>(await conn.query(text, params, name)),
      });
      committing = true;
      await conn.query("commit");
      return result;
    } catch (err) {
      if (conn.lost !== undefined || isConnectionError(err)) {
        failed = true;
        if (err instanceof ConnectionLostError) throw err;
        // Before commit the server rolls the transaction back; during commit it may have committed.
        throw new ConnectionLostError(committing ? "unknown" : false, err);
      }
      await conn.query("rollback").catch(() => {
        failed = true;
      });
      throw err;
    } finally {
      conn.release(failed);
    }
  };

  return {
    query: <R>(text: string, params?: unknown[], name?: string) =>
      withRetries(async () => rowsOf<R>(await queryOnce(text, params, name))),
    transaction: (fn) => withRetries(() => transactionOnce(fn)),
    listen: (channel, fn) =>
      listenWithReconnect(listenConfig, channel, fn, (probe) =>
        withRetries(() => queryOnce("select pg_notify($1, '')", [probe])),
      ),
    close: () => pool.end(),
  };
}
