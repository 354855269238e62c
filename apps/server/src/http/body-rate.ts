/**
 * The slowest a request body may arrive: REFVID_MIN_BODY_BYTES_PER_S, averaged over windows of
 * REFVID_MIN_BODY_WINDOW_MS, for every body, uploads included (docs/decisions.md, "Requests at
 * the edge"). The same rule as a download's floor (net/rate-floor.ts), kept another way: Node's
 * parser reads a body without an event to count its bytes by, so they are read off the socket,
 * and one timer looks at every body, since thousands may be arriving at once. A body still
 * arriving slower than that at the end of a window is refused with `408 request_timeout` naming
 * the rate, and its connection closed, through the same path as an expired request
 * (client-errors.ts): an upload cut off this way holds nothing afterwards.
 *
 * Only the client's time counts. While the server has bytes of the body it has not read (its
 * blob store is slow, or it is still authenticating), the client is not the one holding things
 * up, and that time is left out of the window. The first window is the grace: a body is judged no
 * sooner than one whole window after its headers. Time is counted in the timer's ticks, not read
 * from the clock, as the download floor counts it: an event loop that stalls delays the check
 * with the bytes, rather than blaming the client for the server's own pause.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import type { MinTransferRate } from "../net/rate-floor.js";

/** What one body has sent in its current window, and how much of the client's time that took. */
export interface BodyWindow {
  bytes: number;
  ms: number;
}

/**
 * A window's verdict: `open` until it has lasted `windowMs` of the client's time, then `slow` when
 * fewer bytes came than the rate asks for that time, else `kept` (the next window begins).
 */
export function judgeWindow(window: BodyWindow, rate: MinTransferRate): "open" | "slow" | "kept" {
  if (window.ms < rate.windowMs) return "open";
  return window.bytes * 1000 < rate.bytesPerSecond * window.ms ? "slow" : "kept";
}

/** The error a body too slow is refused with; client-errors.ts answers it as a 408 with this message. */
export class BodyTooSlowError extends Error {
  readonly code = BODY_TOO_SLOW;
  constructor(window: BodyWindow, rate: MinTransferRate) {
    super(
      `The request body arrived at ${Math.floor((window.bytes * 1000) / window.ms)} bytes a second over ` +
        `${formatSeconds(window.ms)}, slower than the ${rate.bytesPerSecond} bytes a second this server takes; ` +
        "send it without pausing (over a slow link, one upload at a time).",
    );
  }
}

export const BODY_TOO_SLOW = "REFVID_BODY_TOO_SLOW";

/** Whether `req` still has a body to come (one without a body is whole with its headers). */
export function bodyToCome(req: IncomingMessage): boolean {
  return (
    !req.complete &&
    (req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined)
  );
}

interface Watched {
  req: IncomingMessage;
  socket: Socket;
  /** The socket's bytes read at the last look. */
  seen: number;
  /** False until the first look, which may come less than a tick after the headers. */
  ticking: boolean;
  window: BodyWindow;
}

/**
 * Watches every request body of `server` until it has arrived, and refuses one that comes too
 * slowly (`clientError` with a BodyTooSlowError). One timer looks at all of them a few times a
 * window, so a thousand slow bodies cost one timer, not a thousand.
 */
export function guardBodyRate(server: Server, rate: MinTransferRate, onSlow?: () => void): void {
  const watched = new Set<Watched>();
  const everyMs = Math.min(1_000, Math.max(50, Math.floor(rate.windowMs / 5)));
  let timer: NodeJS.Timeout | undefined;

  const look = () => {
    for (const w of watched) {
      if (w.req.complete || w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      const read = w.socket.bytesRead;
      w.window.bytes += read - w.seen;
      w.seen = read;
      // Bytes waiting to be read: the server is behind, not the client.
      if (w.req.readableLength > 0 || !w.ticking) {
        w.ticking = true;
        continue;
      }
      w.window.ms += everyMs;
      const verdict = judgeWindow(w.window, rate);
      if (verdict === "kept") w.window = { bytes: 0, ms: 0 };
      if (verdict !== "slow") continue;
      watched.delete(w);
      onSlow?.();
      server.emit("clientError", new BodyTooSlowError(w.window, rate), w.socket);
    }
    if (watched.size === 0) {
      clearInterval(timer);
      timer = undefined;
    }
  };

  server.on("request", (req: IncomingMessage) => {
    if (!bodyToCome(req)) return;
    const socket = req.socket as Socket;
    watched.add({ req, socket, seen: socket.bytesRead, ticking: false, window: { bytes: 0, ms: 0 } });
    timer ??= setInterval(look, everyMs).unref();
  });
}

const formatSeconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
