/** Waiting for a run's end, for sync submits: woken by run events, with the store polled as a backstop. */
import type { Run } from "@refvid/api-types";
import { isTerminal } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import { toApiRun } from "./run-view.js";
import { isConnectionLost } from "./store-errors.js";

/**
 * Waits until the run is terminal (sync submits), polling the store as a backstop to events. A
 * store call that lost its connection is tried again on the next poll: the answer's headers are
 * already out, so giving up would leave the client an empty body. Null once `signal` aborts.
 */
export async function waitForRunEnd(
  deps: AppDeps,
  organizationId: string,
  runId: string,
  signal: AbortSignal,
): Promise<Run | null> {
  let wake: () => void = () => {};
  const off = deps.events.onRunEnded(runId, () => wake());
  const onAbort = () => wake();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (let delay = 250; !signal.aborted; delay = Math.min(delay * 2, 2000)) {
      const run = await deps.store.getRun(organizationId, runId).catch((err: unknown) => {
        if (!isConnectionLost(err)) throw err;
        deps.logger.warn({ err, runId }, "store connection lost while waiting for a run; polling on");
        return undefined;
      });
      if (run && isTerminal(run.status)) return toApiRun(run, deps.signer, deps.clock.now());
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (signal.aborted) wake();
      });
    }
    return null;
  } finally {
    off();
    signal.removeEventListener("abort", onAbort);
  }
}
