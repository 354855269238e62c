/**
 * LISTEN for the `pg` driver: a connection of its own, outside the pool, that reconnects by
 * itself with backoff and says so to its subscriber, pings to find a connection that went silent,
 * and checks at its start that a NOTIFY sent through the pool reaches it (behind a pooler in
 * transaction mode it would not: docs/pgbouncer.md).
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { StoreEvent } from "../types.js";

/** A lost LISTEN connection is re-opened after this, doubling up to LISTEN_RETRY_MAX_MS. */
const LISTEN_RETRY_MIN_MS = 100;
const LISTEN_RETRY_MAX_MS = 5000;
/** A LISTEN connection that does not answer a ping within LISTEN_PING_TIMEOUT_MS is replaced. */
const LISTEN_PING_EVERY_MS = 30_000;
const LISTEN_PING_TIMEOUT_MS = 10_000;
/** The first LISTEN must hear a NOTIFY sent through the pool within this (see `checkHeard`). */
const LISTEN_CHECK_TIMEOUT_MS = 5_000;

/** Socket errors of a connection that broke or could not be made. */
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
export async function listenWithReconnect(
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
