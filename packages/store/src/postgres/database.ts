/**
 * The small query interface PostgresStore runs on. Two drivers implement it, so one SQL
 * implementation serves both: `pgDatabase` (pg-database.ts) against a Postgres server, and
 * `pgliteDatabase` (pglite-database.ts) on embedded PGlite.
 */
import type { StoreConnectionLost } from "../types.js";

export interface Queryable {
  /**
   * With `name`, the statement is prepared once per connection and only bound and run after:
   * a long statement on a hot path is not parsed and analysed again each time. A database opened
   * without prepared statements (behind a pooler in transaction mode) sends it unnamed.
   */
  query<R = Record<string, unknown>>(text: string, params?: unknown[], name?: string): Promise<{ rows: R[] }>;
}

export interface Database extends Queryable {
  /**
   * Calls `fn` with the payload of every NOTIFY on `channel`, from any process; resolves to an
   * unsubscribe. When its connection is lost, `fn` hears the `subscription` StoreEvent
   * `{"kind":"subscription","state":"reconnecting"}` (notifications are missed from then on),
   * and `{"kind":"subscription","state":"ok"}` once it listens again.
   */
  listen(channel: string, fn: (payload: string) => void): Promise<() => Promise<void>>;
  /**
   * Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. `fn` may
   * run again when the connection is lost before commit, so it acts only through `tx`.
   */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A store call that lost its database connection, or could not get one. Retry later. */
export class ConnectionLostError extends Error implements StoreConnectionLost {
  readonly code = "store_connection_lost";

  constructor(
    /** false: nothing was written; "unknown": a write or a commit was cut off and may have happened. */
    readonly committed: false | "unknown",
    cause: unknown,
    connecting = false,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      connecting
        ? `Could not connect to the database: ${reason}`
        : `The database connection was lost: ${reason}`,
      { cause },
    );
    this.name = "ConnectionLostError";
  }
}

/** Rows come back untyped from the driver; each query names the shape it selects. */
export const rowsOf = <R>(result: { rows: unknown[] }) => result as { rows: R[] };
