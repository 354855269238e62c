/**
 * `GET /v1/runs/{run_id}/events`: a run's changes as server-sent events. The stream sends the run
 * as it stands, then an `event: run` on each change of status or progress (at most one per
 * THROTTLE_MS) or of its queue position (at most one per QUEUE_THROTTLE_MS, with its estimates),
 * and ends with an `event: done` holding the terminal run. Changes come from the
 * run events this process hears (its own worker, or other processes through the store's
 * subscription), with the store read again as a backstop, so a missed event costs latency only.
 *
 * Each event's id is the state it shows (`processing:0.45`, `queued::3`): a client that reconnects with
 * `Last-Event-ID` is sent the run again only if it changed meanwhile. A process that stops before
 * the run ends (docs/decisions.md, "Shutdown") sends `event: going_away` and closes the stream:
 * the client reconnects and is served by another process.
 */

import type { Run } from "@refvid/api-types";
import { isTerminal, TooManyStreamsError } from "@refvid/core";
import { isConnectionLost } from "@refvid/store";
import type { Request, Response } from "express";
import type { Caller } from "../auth/request-context.js";
import type { CancelTimer } from "../clock.js";
import type { AppDeps } from "../deps.js";
import { getRun } from "./get-run.js";

export const THROTTLE_MS = 250;
export const HEARTBEAT_MS = 15_000;
/** The backstop read of the store: from THROTTLE_MS, doubling up to this while nothing wakes it. */
const BACKSTOP_MAX_MS = 5_000;
/**
 * The last event of a stream whose process stops first. No `id`, so the last event id stays the
 * run's state; `retry` is how long a browser's EventSource waits before it reconnects.
 */
const GOING_AWAY = `event: going_away\nretry: 1000\ndata: ${JSON.stringify({
  message:
    "This server is shutting down. Reconnect with Last-Event-ID to keep following the run; another server will answer.",
})}\n\n`;

/** Open streams per API key in this process, held to a cap. */
export class StreamSlots {
  private readonly open = new Map<string, number>();
  constructor(private readonly max: number) {}

  /** Takes a slot for `apiKeyId`, or throws the 429. Returns the release. */
  take(apiKeyId: string): () => void {
    const held = this.open.get(apiKeyId) ?? 0;
    if (held >= this.max) throw new TooManyStreamsError(this.max);
    this.open.set(apiKeyId, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(apiKeyId) ?? 1) - 1;
      if (left > 0) this.open.set(apiKeyId, left);
      else this.open.delete(apiKeyId);
    };
  }
}

/** A queued run's place moves at most this often in its stream (its position, its estimates). */
export const QUEUE_THROTTLE_MS = 1000;

export const eventIdOf = (run: Pick<Run, "status" | "progress" | "queue_position">) =>
  run.queue_position === undefined
    ? `${run.status}:${run.progress ?? ""}`
    : `${run.status}:${run.progress ?? ""}:${run.queue_position}`;

/** Whether the two states differ in more than where the run stands in a queue. */
const movedOn = (id: string, lastId: string | null) =>
  lastId === null || id.split(":").slice(0, 2).join(":") !== lastId.split(":").slice(0, 2).join(":");

/**
 * Serves one stream until the run ends, the client goes, or `shutdown` (the drain's deadline)
 * aborts, which ends it with `going_away`.
 */
export async function streamRunEvents(
  deps: AppDeps,
  caller: Caller,
  runId: string,
  req: Request,
  res: Response,
  { slots, shutdown }: { slots: StreamSlots; shutdown: AbortSignal },
): Promise<void> {
  const first = await getRun(deps, caller, runId); // a 404 before any byte of the stream
  const release = slots.take(caller.apiKey.id);
  const closed = new AbortController();
  const stop = () => closed.abort();
  res.on("close", stop);
  shutdown.addEventListener("abort", stop, { once: true });
  if (shutdown.aborted) stop();

  let wake: () => void = () => {};
  const woken = () => wake();
  const unsubscribe = [deps.events.onRunChanged(runId, woken), deps.events.onRunEnded(runId, woken)];
  let cancelHeartbeat: CancelTimer = () => {};
  const heartbeat = () => {
    res.write(": keep-alive\n\n");
    cancelHeartbeat = deps.scheduler.setTimeout(heartbeat, HEARTBEAT_MS);
  };
  try {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      "X-Accel-Buffering": "no",
    });
    res.flushHeaders();
    cancelHeartbeat = deps.scheduler.setTimeout(heartbeat, HEARTBEAT_MS);

    let lastId = req.get("last-event-id") ?? null;
    let sentAt = Number.NEGATIVE_INFINITY;
    let run: Run | undefined = first;
    for (let delay = THROTTLE_MS; !closed.signal.aborted; ) {
      const id = run && eventIdOf(run);
      const queueOnly = id !== undefined && !movedOn(id, lastId);
      const waited = deps.clock.now().getTime() - sentAt >= QUEUE_THROTTLE_MS;
      if (run && (isTerminal(run.status) || (id !== lastId && (!queueOnly || waited)))) {
        const done = isTerminal(run.status);
        lastId = id as string;
        res.write(`id: ${lastId}\nevent: ${done ? "done" : "run"}\ndata: ${JSON.stringify(run)}\n\n`);
        sentAt = deps.clock.now().getTime();
        delay = THROTTLE_MS;
        if (done) return;
      }
      // Wait for a wake-up or the backstop, and never send again within THROTTLE_MS.
      await new Promise<void>((resolve) => {
        const cancel = deps.scheduler.setTimeout(() => finish(), delay);
        const finish = () => {
          cancel();
          wake = () => {};
          closed.signal.removeEventListener("abort", finish);
          resolve();
        };
        wake = finish;
        closed.signal.addEventListener("abort", finish, { once: true });
      });
      const sinceSent = deps.clock.now().getTime() - sentAt;
      if (sinceSent < THROTTLE_MS && !closed.signal.aborted) {
        await new Promise<void>((resolve) => deps.scheduler.setTimeout(resolve, THROTTLE_MS - sinceSent));
      }
      if (closed.signal.aborted) break;
      // A queued run's place changes with other runs' starts, which wake no one here: read it each
      // QUEUE_THROTTLE_MS while it waits.
      delay = Math.min(delay * 2, run?.status === "queued" ? QUEUE_THROTTLE_MS : BACKSTOP_MAX_MS);
      run = await getRun(deps, caller, runId).catch((err: unknown) => {
        if (!isConnectionLost(err)) throw err;
        return undefined; // read again at the next wake-up or backstop
      });
    }
    if (shutdown.aborted && !res.destroyed) res.write(GOING_AWAY);
  } finally {
    cancelHeartbeat();
    for (const off of unsubscribe) off();
    shutdown.removeEventListener("abort", stop);
    release();
    if (!res.writableEnded) res.end();
  }
}
