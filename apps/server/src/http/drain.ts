/**
 * Stopping an API process without cutting what it holds (docs/decisions.md, "Shutdown"). Responses
 * held open for a run, sync submits waiting for its end and run event streams, are let finish by
 * themselves for up to REFVID_DRAIN_MS while the process takes no new work; at the deadline each is
 * told to answer at once (a sync submit with the run as it stands, a stream with `going_away`).
 * A connection whose held answer is out is closed rather than kept alive, so the client's next
 * request opens a new one, which a load balancer sends to another process.
 */
import type { ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { ShuttingDownError } from "./http-errors.js";

/** After the deadline, how long the held responses may take to write their last answers. */
export const LAST_ANSWERS_MS = 5_000;

/** Answered as usual while draining: the probes (readiness then says 503) and the metrics. */
const ALWAYS_ANSWERED = new Set(["/healthz", "/readyz", "/metrics"]);

export class Drain {
  private readonly begun = new AbortController();
  private readonly due = new AbortController();
  private readonly held = new Set<ServerResponse>();
  private emptied: () => void = () => {};

  /** Aborted when the process begins to stop: readiness answers 503 and requests are refused. */
  get started(): AbortSignal {
    return this.begun.signal;
  }

  /** Aborted at the drain's deadline: held responses answer with what they have, now. */
  get deadline(): AbortSignal {
    return this.due.signal;
  }

  /** Counts `res` as held for a run until it closes. */
  hold(res: ServerResponse): void {
    const { socket } = res;
    this.held.add(res);
    res.once("close", () => {
      this.held.delete(res);
      // Its headers said keep-alive; ending the connection after the answer (not resetting it)
      // lets the client read the whole body, then reconnect elsewhere.
      if (this.begun.signal.aborted) socket?.end();
      if (this.held.size === 0) this.emptied();
    });
  }

  /**
   * First in the app's chain: while draining, every answer closes its connection, and anything but
   * the probes and the metrics is refused with `503 service_unavailable` and `Retry-After: 1`.
   * Such a request can only come on a connection opened before the stop (new ones are refused).
   */
  refuseWhileDraining(): RequestHandler {
    return (req, res, next) => {
      if (!this.begun.signal.aborted) return next();
      res.setHeader("Connection", "close");
      if (ALWAYS_ANSWERED.has(req.path)) return next();
      next(new ShuttingDownError());
    };
  }

  /** Begins the drain: from now on, readiness fails and requests are refused. */
  begin(): void {
    this.begun.abort();
  }

  /**
   * Begins the drain if it has not begun, waits up to `ms` for the held responses to end by
   * themselves, then tells those left (and any held from now on) to answer now and waits up to
   * LAST_ANSWERS_MS for them. Resolves when none is held, or at that second limit.
   */
  async settle(ms: number): Promise<void> {
    this.begin();
    await this.untilEmpty(ms, this.due.signal);
    this.due.abort();
    await this.untilEmpty(LAST_ANSWERS_MS);
  }

  /** Cuts the wait short: held responses answer now (a second SIGTERM or SIGINT). */
  hurry(): void {
    this.due.abort();
  }

  /** How many responses are held (tests and logs read it). */
  get size(): number {
    return this.held.size;
  }

  /** Wall-clock waits: a stop is the process's own business, never a test's manual clock. */
  private untilEmpty(ms: number, cut?: AbortSignal): Promise<void> {
    if (this.held.size === 0 || cut?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        cut?.removeEventListener("abort", done);
        this.emptied = () => {};
        resolve();
      };
      const timer = setTimeout(done, ms);
      cut?.addEventListener("abort", done, { once: true });
      this.emptied = done;
    });
  }
}
