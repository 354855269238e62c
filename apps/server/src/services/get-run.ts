/** Poll: a run of the caller's organization (interface, "Endpoints" 2); another organization's is a 404. */
import type { Run } from "@refvid/api-types";
import { NotFoundError } from "@refvid/core";
import type { AppDeps } from "../deps.js";
import type { Caller } from "./request-context.js";
import { toApiRun } from "./run-view.js";

export const runNotFound = (runId: string) =>
  new NotFoundError("run_not_found", `No run ${runId} in this organization.`);

export async function getRun(deps: AppDeps, caller: Caller, runId: string): Promise<Run> {
  const run = await deps.store.getRun(caller.organization.id, runId);
  if (!run) throw runNotFound(runId);
  return toApiRun(run, deps.signer, deps.clock.now());
}
