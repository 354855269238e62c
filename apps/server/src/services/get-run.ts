/**
 * Poll: a run of the caller's organization and environment (interface, "Endpoints" 2); another
 * organization's run, or a run of the other environment, is a 404.
 */
import type { Run } from "@refvid/api-types";
import { NotFoundError } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { toApiRun } from "../views/run-view.js";
import { queueStanding } from "./queue-standing.js";

export const runNotFound = (runId: string) =>
  new NotFoundError("run_not_found", `No run ${runId} in this organization.`);

/** The run if the caller's key may see it: live and test runs are separate worlds. */
export const visibleRun = (caller: Caller, run: RunRecord | null): RunRecord | null =>
  run && run.environment === caller.apiKey.environment ? run : null;

export async function getRun(deps: AppDeps, caller: Caller, runId: string): Promise<Run> {
  let run = visibleRun(caller, await deps.store.getRun(caller.organization.id, runId));
  if (!run) throw runNotFound(runId);
  let queue = await queueStanding(deps, run);
  if (run.status === "queued" && queue === null) {
    // A worker took it between the two reads: answer with the run as it is now, never a queued
    // run without its place.
    run = visibleRun(caller, await deps.store.getRun(caller.organization.id, runId)) ?? run;
    queue = await queueStanding(deps, run);
  }
  return toApiRun(run, deps.signer, deps.clock.now(), queue);
}
