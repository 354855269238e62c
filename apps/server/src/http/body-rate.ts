/**
 * The slowest a request body may arrive: REFVID_MIN_BODY_BYTES_PER_S, averaged over windows of
 * REFVID_BODY_RATE_WINDOW_MS, for every body, uploads included (docs/decisions.md, "Requests at
 * the edge"). A body still arriving slower than that at the end of a window is refused with
 * `408 request_timeout` naming the rate, and its connection closed, through the same path as an
 * expired request (client-errors.ts): an upload cut off this way holds nothing afterwards.
 *
 * Only the client's time counts. While the server has bytes of the body it has not read (its
 * blob store is slow, or it is still authenticating), the client is not the one holding things
 * up, and that time is left out of the window. The first window is the grace: a body is judged no
 * sooner than one whole window after its headers.
 */
import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";

export interface BodyRate {
  minBytesPerS: number;
  windowMs: number;
}

/** What one body has sent in its current window, and how much of the client's time that took. */
export interface BodyWindow {
  bytes: number;
  ms: number;
}

/**
 * A window's verdict: `open` until it has lasted `windowMs` of the client's time, then `slow` when
 * fewer bytes came than the rate asks for that time, else `kept` (the next window begins).
 */
export function judgeWindow(window: BodyWindow, rate: BodyRate): "open" | "slow" | "kept" {
  if (window.ms < rate.windowMs) return "open";
  return window.bytes * 1000 < rate.minBytesPerS * window.ms ? "slow" : "kept";
}

/** The error a body too slow is refused with; client-errors.ts answers it as a 408 with this message. */
export class BodyTooSlowError extends Error {
  readonly code = BODY_TOO_SLOW;
  constructor(window: BodyWindow, rate: BodyRate) {
    super(
      `The request body arrived at ${Math.floor((window.bytes * 1000) / window.ms)} bytes a second over ` +
        `${formatSeconds(window.ms)}, slower than the ${rate.minBytesPerS} bytes a second this server takes; ` +
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
  at: number;
  window: BodyWindow;
}

/**
 * Watches every request body of `server` until it has arrived, and refuses one that comes too
 * slowly (`clientError` with a BodyTooSlowError). One timer looks at all of them a few times a
 * window, so a thousand slow bodies cost one timer, not a thousand. A rate of 0 watches nothing.
 */
export function guardBodyRate(server: Server, rate: BodyRate, onSlow?: () => void): void {
  if (rate.minBytesPerS <= 0) return;
  const watched = new Set<Watched>();
  const everyMs = Math.min(1_000, Math.max(50, Math.floor(rate.windowMs / 5)));
  let timer: NodeJS.Timeout | undefined;

  const look = () => {
    const now = performance.now();
    for (const w of watched) {
      if (w.req.complete || w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      const read = w.socket.bytesRead;
      w.window.bytes += read - w.seen;
      w.seen = read;
      const elapsed = now - w.at;
      w.at = now;
      // Bytes waiting to be read: the server is behind, not the client.
      if (w.req.readableLength > 0) continue;
      w.window.ms += elapsed;
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
    watched.add({ req, socket, seen: socket.bytesRead, at: performance.now(), window: { bytes: 0, ms: 0 } });
    timer ??= setInterval(look, everyMs).unref();
  });
}

const formatSeconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
