/** `GET /admin/v1/runs/{run_id}/vendor-log`: a run's vendor log, for operators. */
import { NotFoundError } from "@refvid/core";
import type { AppDeps } from "../deps.js";

export async function adminVendorLog(deps: AppDeps, runId: string) {
  const run = await deps.store.getRunById(runId);
  if (!run) throw new NotFoundError("run_not_found", `No run ${runId}.`);
  const log = await deps.store.listVendorEvents(runId);
  return {
    run_id: runId,
    data: log.map((entry) => ({
      at: entry.at.toISOString(),
      route: entry.provider,
      upstream_id: entry.upstreamId,
      kind: entry.kind,
      detail: entry.detail,
    })),
  };
}
