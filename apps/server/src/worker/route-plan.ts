/**
 * The route plan of one run: which routes may serve it (a test run goes to the sandbox rather than a
 * vendor, `runsInSandbox`), where it resumes (the route whose vendor job a previous worker recorded),
 * and the order of fallback: the next route is tried only when a vendor never accepted the job. A
 * route whose provider has no free slot ends the attempt with `ProviderFull` (and a run with no
 * download slot for its references, `DownloadsFull`), and the run waits in the queue.
 */
import { type NormalizedRequest, runsInSandbox } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { Logger } from "pino";
import { checkRoutes } from "../catalog/route-check.js";
import type { ProviderRoute } from "../catalog/routes.js";
import type { ServedModel } from "../catalog/served-catalog.js";
import type { AppDeps } from "../deps.js";
import { ProviderError, type ProviderResult } from "../providers/types.js";
import { VendorError } from "../providers/upstream/vendor-http.js";
import { progressReporter, queueReporter } from "./progress.js";
import { providerJob } from "./provider-job.js";
import type { DownloadGate } from "./slots.js";
import { ProviderFull, RunStopped } from "./stops.js";
import { vendorSide } from "./vendor-side.js";

/** The routes a run may take, in order, and the index of the one to resume (-1: start at the first). */
export function routePlan(
  deps: Pick<AppDeps, "catalog" | "sandbox">,
  run: RunRecord,
  served: ServedModel,
): { routes: ProviderRoute[]; resumeAt: number } {
  const configured = served.routes;
  if (runsInSandbox(run.environment, configured)) {
    return {
      routes: [{ name: "simulated", slot: "simulated", provider: deps.sandbox, vendor: false }],
      resumeAt: -1,
    };
  }
  const upstream = run.upstream;
  if (!upstream) return { routes: configured, resumeAt: -1 };
  const resumeAt = configured.findIndex((route) => route.name === upstream.provider);
  if (resumeAt >= 0) return { routes: configured, resumeAt };
  // A reload took the route away while its vendor job ran: follow the job there, never start another.
  const earlier = deps.catalog.route(run.endpoint, upstream.provider);
  return earlier ? { routes: [earlier, ...configured], resumeAt: 0 } : { routes: configured, resumeAt: -1 };
}

export interface RouteCall {
  served: ServedModel;
  request: NormalizedRequest;
  workDir: string;
  signal: AbortSignal;
  deadline: number;
  log: Logger;
  workerId: string;
  /** Where references are downloaded: on one of the worker's download slots. */
  downloads?: DownloadGate | undefined;
}

/**
 * Calls the run's providers along its route plan until one delivers a video; what one returns is
 * the attempt's result, with the route that made it. A route whose vendor schema refuses the run's
 * input (as the route maps it) is skipped. Throws what the last route threw, `ProviderFull`,
 * `DownloadsFull`, or the signal's reason.
 */
export async function callRoutes(
  deps: AppDeps,
  run: RunRecord,
  call: RouteCall,
): Promise<{ result: ProviderResult; route: ProviderRoute }> {
  const { served, request, workDir, signal, deadline, log, workerId, downloads } = call;
  const plan = routePlan(deps, run, served);
  const resumed = plan.routes[plan.resumeAt];
  const { accepted, refused } = await checkRoutes(
    plan.routes.filter((_, i) => i > plan.resumeAt),
    run.input,
  );
  for (const refusal of refused) {
    log.info(
      { route: refusal.route.name, problems: refusal.problems },
      "the route's vendor refuses this input",
    );
  }
  const routes = resumed ? [resumed, ...accepted] : accepted;
  const resumeAt = resumed ? 0 : -1;
  if (routes.length === 0 && refused.length > 0) {
    throw new ProviderError(`No route takes this input: ${refused[0]?.problems[0]?.message ?? ""}`);
  }
  const onProgress = progressReporter(deps, run.id);
  const onQueuePosition = queueReporter(deps, run.id);
  let result: ProviderResult | undefined;
  let servedBy: ProviderRoute | undefined;
  for (let i = 0; i < routes.length && !result; i++) {
    const route = routes[i] as ProviderRoute;
    const upstream = i === resumeAt ? run.upstream : null;
    let accepted = upstream !== null;
    if (upstream) log.info({ provider: route.name, upstreamId: upstream.id }, "resuming the vendor job");
    if (
      route.maxConcurrency !== undefined &&
      !(await deps.store.acquireProvider({
        runId: run.id,
        workerId,
        provider: route.slot,
        limit: route.maxConcurrency,
      }))
    ) {
      throw new ProviderFull(route.slot);
    }
    const job = await providerJob(deps, run, route, {
      model: served.model,
      request,
      workDir,
      signal,
      downloads,
    });
    const called = deps.metrics.providerCall(run.id, route.slot);
    const vendor = route.vendor ? vendorSide(deps, run.id, route) : undefined;
    try {
      result = await route.provider.run(job, {
        signal,
        onProgress,
        onQueuePosition,
        deadline,
        upstream,
        ...(vendor ? { vendor } : {}),
        recordUpstream: async (upstreamJob) => {
          accepted = true;
          const kept = await deps.store.recordUpstream({ runId: run.id, workerId, upstream: upstreamJob });
          log.info({ provider: route.name, upstreamId: upstreamJob.id }, "vendor accepted the run");
          // Another worker holds the run now and cannot know of this job: the provider, seeing
          // the failed record, cancels it.
          if (!kept) throw new RunStopped("lease_lost");
        },
      });
      called("succeeded");
      servedBy = route;
    } catch (err) {
      called(
        signal.aborted || err instanceof RunStopped || err instanceof ProviderFull ? "stopped" : "failed",
      );
      const next = routes[i + 1];
      if (signal.aborted || !(err instanceof VendorError) || accepted || !next) throw err;
      log.warn(
        { provider: route.name, next: next.name, err: err.message },
        "vendor did not take the run; trying the next route",
      );
    } finally {
      vendor?.close();
    }
  }
  if (signal.aborted) throw signal.reason;
  if (!result || !servedBy) throw new ProviderError("No provider is configured for this model.");
  return { result, route: servedBy };
}
