/**
 * Cog 0.12's blocked event loop (`flavor: "python-0.12"`): while a held sync prediction runs no
 * request is served; the requests that came meanwhile are served one at a time, in the order they
 * came, once it ended, and one whose client left is never served. The sources are in cog-server.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CogContext } from "./cog-context.js";

/** The server's turns over `ctx`: `block` while a held prediction runs, `admit` each request. */
export function blockingLoop(ctx: CogContext) {
  const { knobs, stats, closing } = ctx;
  /** Ends when the held sync prediction blocking the server ends; null while nothing blocks. */
  let blocking: Promise<void> | null = null;
  /** Requests are served one at a time, in order: each waits for the one before to answer or block. */
  let queue: Promise<void> = Promise.resolve();
  let yieldTurn = () => {};

  const block = (ended: Promise<void>) => {
    const current: Promise<void> = ended.then(() => {
      if (blocking === current) blocking = null;
    });
    blocking = current;
    yieldTurn();
  };

  /** Waits for the server's turn (0.12 only); false when the client left meanwhile. */
  const admit = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (knobs.flavor !== "python-0.12" && !blocking) return true;
    const before = queue;
    let turnOver = () => {};
    queue = new Promise<void>((resolve) => {
      turnOver = resolve;
    });
    const request = `${req.method} ${req.url}`;
    stats.waiting.push(request);
    await before;
    while (blocking) await blocking;
    stats.waiting.splice(stats.waiting.indexOf(request), 1);
    if (closing.aborted || res.destroyed) {
      stats.unserved++;
      turnOver();
      return false;
    }
    yieldTurn = turnOver;
    res.once("close", turnOver);
    return true;
  };

  return { block, admit };
}
