/**
 * The `pg` driver of Database, against a Postgres server.
 *
 * A connection the server drops (restart, failover, `pg_terminate_backend`) fails only the call
 * it carried, with a `ConnectionLostError`, and the pool replaces it. A call is retried on a new
 * connection when that cannot apply a write twice: a read, a transaction cut off before its
 * commit was sent, or any call that could not get a connection at all. A LISTEN connection
 * reconnects by itself, with backoff, and says so to its subscriber.
 *
 * Behind a pooler in transaction mode (PgBouncer, docs/pgbouncer.md) every transaction may run on
 * another server connection: LISTEN then needs a direct connection of its own (`listenUrl`), and
 * named statements must be off (`preparedStatements: false`). A subscription checks at its start
 * that a NOTIFY sent through the pool reaches its LISTEN, so a LISTEN that went through such a
 * pooler too fails there rather than leave every process deaf to the others.
 */
import { randomBytes } from "node:crypto";
import pg, { type Pool, type PoolClient } from "pg";
import type { StoreEvent } from "../types.js";
import { ConnectionLostError, type Database, type Queryable, rowsOf } from "./database.js";

/** Waits before each retry of a call that lost its connection; then it fails. */
const RETRY_DELAYS_MS = [20, 100, 300];
/** A lost LISTEN connection is re-opened after this, doubling up to LISTEN_RETRY_MAX_MS. */
const LISTEN_RETRY_MIN_MS = 100;
const LISTEN_RETRY_MAX_MS = 5000;
/** A LISTEN connection that does not answer a ping within LISTEN_PING_TIMEOUT_MS is replaced. */
const LISTEN_PING_EVERY_MS = 30_000;
const LISTEN_PING_TIMEOUT_MS = 10_000;
/** The first LISTEN must hear a NOTIFY sent through the pool within this (see `checkHeard`). */
const LISTEN_CHECK_TIMEOUT_MS = 5_000;

/** Socket errors of a connection that broke or could not be made. */
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

/** Runs `once` again after a lost connection while nothing can have been written twice. */
async function withRetries<T>(once: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await once();
    } catch (err) {
      const delay = RETRY_DELAYS_MS[attempt];
      if (!(err instanceof ConnectionLostError) || err.committed !== false || delay === undefined) throw err;
      await pause(delay);
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

/**
 * Fails unless a NOTIFY sent by `notify` (through the pool) reaches `client`. Behind a pooler in
 * transaction mode, a LISTEN sent through it lands on a server connection that goes back to the
 * pooler's pool: a notification then reaches whichever client is using it, or none (PgBouncer
 * drops a server connection that speaks while idle), never the listener.
 */
async function checkHeard(client: pg.Client, notify: (channel: string) => Promise<unknown>) {
  const probe = `refvid_probe_${randomBytes(6).toString("hex")}`;
  let timer: NodeJS.Timeout | undefined;
  let onNotification: ((message: pg.Notification) => void) | undefined;
  const heard = new Promise<void>((resolve, reject) => {
    onNotification = (message) => {
      if (message.channel === probe) resolve();
    };
    client.on("notification", onNotification);
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `LISTEN heard no NOTIFY sent through the pool within ${LISTEN_CHECK_TIMEOUT_MS / 1000} s. Behind a ` +
              "pooler in transaction mode (PgBouncer) LISTEN must reach Postgres itself: set DATABASE_LISTEN_URL " +
              "to the database's direct URL (docs/pgbouncer.md), the same database as DATABASE_URL.",
          ),
        ),
      LISTEN_CHECK_TIMEOUT_MS,
    );
  });
  heard.catch(() => {}); // the timer may fire while LISTEN or NOTIFY is still out: never unhandled
  try {
    await client.query(`listen ${quoteIdent(probe)}`);
    await notify(probe);
    await heard;
    await client.query(`unlisten ${quoteIdent(probe)}`);
  } finally {
    clearTimeout(timer);
    if (onNotification) client.off("notification", onNotification);
  }
}

/**
 * LISTEN on a connection of its own, outside the pool, re-opened with backoff when lost. The first
 * connection is checked with `notify` (`checkHeard`): a configuration that cannot hear fails here.
 */
async function listenWithReconnect(
  config: pg.ClientConfig,
  channel: string,
  fn: (payload: string) => void,
  notify: (channel: string) => Promise<unknown>,
): Promise<() => Promise<void>> {
  let current: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = LISTEN_RETRY_MIN_MS;
  let reconnecting = false;
  const say = (event: StoreEvent) => {
    try {
      fn(JSON.stringify(event));
    } catch {
      // the subscriber's own failure; the subscription goes on
    }
  };

  const lost = () => {
    current = undefined;
    if (closed) return;
    if (!reconnecting) {
      reconnecting = true;
      say({ kind: "subscription", state: "reconnecting" });
    }
    retry = setTimeout(async () => {
      retry = undefined;
      try {
        await open();
      } catch {
        delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
        lost();
        return;
      }
      if (closed) return;
      delay = LISTEN_RETRY_MIN_MS;
      reconnecting = false;
      say({ kind: "subscription", state: "ok" });
    }, delay);
    retry.unref();
  };

  const open = async (check = false) => {
    const client = new pg.Client(config);
    let gone = false;
    let ping: NodeJS.Timeout | undefined;
    const onGone = () => {
      if (gone) return;
      gone = true;
      clearInterval(ping);
      if (current === client) lost();
    };
    client.on("error", onGone);
    client.on("end", onGone);
    client.on("notification", (message) => {
      if (message.channel === channel) fn(message.payload ?? "");
    });
    try {
      await client.connect();
      if (check) await checkHeard(client, notify);
      await client.query(`listen ${quoteIdent(channel)}`);
      if (gone) throw new Error("the connection was lost while subscribing");
    } catch (err) {
      gone = true;
      await client.end().catch(() => {});
      throw err;
    }
    if (closed) {
      gone = true;
      await client.end().catch(() => {});
      return;
    }
    current = client;
    // A connection that silently stopped answering (a half-open socket) is replaced too.
    const replace = () => {
      void client.end().catch(() => {});
      onGone();
    };
    ping = setInterval(() => {
      const silent = setTimeout(replace, LISTEN_PING_TIMEOUT_MS);
      client.query("select 1").then(
        () => clearTimeout(silent),
        () => {
          clearTimeout(silent);
          replace();
        },
      );
    }, LISTEN_PING_EVERY_MS);
    ping.unref();
  };

  await open(true);
  return async () => {
    closed = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    await client?.end().catch(() => {});
  };
}

const quoteIdent = (name: string) => `"${name.replaceAll('"', '""')}"`;
