/**
 * Cancel: ends an in-flight run of the caller's organization and environment as `cancelled`,
 * uncharged; 409 once it has ended.
 */
import type { Run } from "@refvid/api-types";
import { ConflictError, runErrors } from "@refvid/core";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { toApiRun } from "../views/run-view.js";
import { runNotFound } from "./get-run.js";

export async function cancelRun(deps: AppDeps, caller: Caller, runId: string): Promise<Run> {
  const now = deps.clock.now();
  const result = await deps.store.completeRun({
    runId,
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    outcome: {
      status: "cancelled",
      error: runErrors.cancelled(),
    },
    now,
  });
  switch (result.kind) {
    case "not_found":
      throw runNotFound(runId);
    case "already_terminal":
    case "lease_lost": // a cancel holds no lease; listed so the switch stays exhaustive
      throw new ConflictError(
        "run_not_cancellable",
        `Run ${runId} is ${result.run.status} and can no longer be cancelled.`,
      );
    case "completed": // the store's `ended` event stops a local worker on the run
      return toApiRun(result.run, deps.signer, now);
  }
}
