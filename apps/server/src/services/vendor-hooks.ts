/**
 * A vendor's webhook about one of a run's jobs (`POST /v1/vendor-hooks/{route}/{run}/{token}`).
 * It is taken only when the URL's token is the one refvid gave that vendor for that run and
 * route, and the vendor's own signature verifies (fal, Replicate; Cog signs nothing, so its token
 * is all). A taken webhook is written to the run's vendor log, which wakes the worker following
 * the job; the worker then asks the vendor's API, so a webhook's claims never end a run by
 * themselves, but for Cog, which has no API to ask: the end of an async prediction comes only in
 * its webhook, whose body is kept with the entry (see docs/decisions.md, "Cog predictions are
 * async"). A webhook naming a job of a run that has ended and never followed that job is an
 * orphan: it is logged and the job cancelled.
 */
import { isInFlight } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { HookRefused, type Provider, type VendorHook } from "../providers/types.js";
import { writeVendorLog } from "../worker/vendor-side.js";

export type VendorHookAnswer =
  /** Taken (or nothing to do): the vendor stops retrying. */
  | { status: 200 }
  /** Not ours to take: an unknown run or route, a token or signature that does not verify. */
  | { status: 404 | 401; message: string };

/** The run and route a webhook URL names, once its token verified: where its body goes. */
export interface VendorHookTarget {
  route: string;
  run: RunRecord;
  provider: Provider & Required<Pick<Provider, "readHook">>;
}

/**
 * The run and route of a webhook URL, or the refusal: checked before the body is read, so that
 * only a URL refvid gave a vendor can send one, and no larger than that vendor's.
 */
export async function vendorHookTarget(
  deps: AppDeps,
  { route, runId, token }: { route: string; runId: string; token: string },
): Promise<VendorHookTarget | Exclude<VendorHookAnswer, { status: 200 }>> {
  const metrics = deps.metrics.vendor;
  if (!deps.hookUrls.verify(route, runId, token)) {
    metrics.hook(route, "refused");
    return { status: 404, message: "No such vendor webhook URL." };
  }
  const run = await deps.store.getRunById(runId);
  const provider = run && deps.catalog.route(run.endpoint, route)?.provider;
  if (!run || !provider?.readHook) {
    metrics.hook(route, "unknown_run");
    return { status: 404, message: "This run has no such vendor route." };
  }
  return { route, run, provider: provider as VendorHookTarget["provider"] };
}

export async function receiveVendorHook(
  deps: AppDeps,
  { route, run, provider }: VendorHookTarget,
  hook: VendorHook,
): Promise<VendorHookAnswer> {
  const metrics = deps.metrics.vendor;
  const runId = run.id;
  let said: { upstreamId: string; status: string | null; keep?: boolean };
  try {
    said = await provider.readHook(hook);
  } catch (err) {
    if (!(err instanceof HookRefused)) throw err;
    metrics.hook(route, "refused");
    deps.logger.warn({ runId, route, reason: err.message }, "refused a vendor webhook");
    return { status: 401, message: `The webhook does not verify: ${err.message}` };
  }
  metrics.hook(route, "accepted");
  await deps.store.addVendorEvent({
    runId,
    provider: route,
    upstreamId: said.upstreamId,
    kind: "hook",
    detail: said.status,
    at: deps.clock.now(),
    payload: said.keep ? hook.body.toString("utf8") : null,
  });
  const followed = run.upstream?.provider === route && run.upstream.id === said.upstreamId;
  if (!isInFlight(run.status) && !followed && provider.cancelUpstream) {
    // Nobody will follow this job: the run ended without it.
    const why = { upstreamId: said.upstreamId, detail: "the run had ended" };
    await writeVendorLog(deps, runId, route, { kind: "orphan", ...why });
    await provider.cancelUpstream({ provider: route, id: said.upstreamId, urls: {} });
    await writeVendorLog(deps, runId, route, { kind: "cancelled", ...why });
  }
  return { status: 200 };
}
