/** Waiting for a run's end, for sync submits: woken by run events, with the store polled as a backstop. */
import type { Run } from "@refvid/api-types";
import { isTerminal } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import { pollUntil } from "../poll-until.js";
import { toApiRun } from "./run-view.js";
import { isConnectionLost } from "./store-errors.js";

/**
 * Waits until the run is terminal (sync submits), polling the store as a backstop to events. A
 * store call that lost its connection is tried again on the next poll: the answer's headers are
 * already out, so giving up would leave the client an empty body. Null once `signal` aborts.
 */
export function waitForRunEnd(
  deps: AppDeps,
  organizationId: string,
  runId: string,
  signal: AbortSignal,
): Promise<Run | null> {
  return pollUntil(
    deps.scheduler,
    async () => {
      const run = await deps.store.getRun(organizationId, runId).catch((err: unknown) => {
        if (!isConnectionLost(err)) throw err;
        deps.logger.warn({ err, runId }, "store connection lost while waiting for a run; polling on");
        return undefined;
      });
      return run && isTerminal(run.status) ? toApiRun(run, deps.signer, deps.clock.now()) : undefined;
    },
    { signal, firstDelayMs: 250, maxDelayMs: 2000, wake: (wake) => deps.events.onRunEnded(runId, wake) },
  );
}
