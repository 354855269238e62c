/**
 * Where a queued run stands (docs/decisions.md, "Fair queues"): its position under the fair-share
 * order and when it should start and end. The store reads the counts; core decides. The capacity
 * is the run's first route's provider limit (`max_concurrency`), or the workers' slots
 * (REFVID_WORKER_CONCURRENCY) when the provider has none or a test run goes to the sandbox.
 */
import { estimateQueue, type QueueEstimate, queuePosition, runsInSandbox } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";

/** The sliding window: this many of the model's most recent successes. */
export const DURATION_WINDOW = 100;

export interface QueueStanding {
  position: number;
  estimate: QueueEstimate | null;
}

export async function queueStanding(
  deps: Pick<AppDeps, "store" | "catalog" | "config" | "clock">,
  run: RunRecord,
): Promise<QueueStanding | null> {
  if (run.status !== "queued") return null;
  const served = deps.catalog.current.find(run.endpoint);
  const sandboxed = !served || runsInSandbox(run.environment, served.routes);
  const route = sandboxed ? undefined : served.routes[0];
  const capped = route?.maxConcurrency !== undefined;
  const [standing, samples] = await Promise.all([
    deps.store.queueStanding({ runId: run.id, provider: capped ? route?.slot : null }),
    durationWindow(deps, run, route?.name ?? null),
  ]);
  if (!standing) return null; // it started meanwhile
  const now = deps.clock.now();
  const position = queuePosition(standing.own, standing.aheadInOrganization, standing.others);
  const estimate = estimateQueue({
    now,
    ahead: position,
    capacity: route?.maxConcurrency ?? deps.config.workerConcurrency,
    runningElapsedMs: standing.runningSince.map((since) => Math.max(0, now.getTime() - since.getTime())),
    samplesMs: samples,
  });
  return { position, estimate };
}

/** The route's own recent durations when it has enough, else the model's over every route. */
async function durationWindow(
  deps: Pick<AppDeps, "store">,
  run: RunRecord,
  route: string | null,
): Promise<number[]> {
  const own = await deps.store.recentDurations({ endpoint: run.endpoint, route, limit: DURATION_WINDOW });
  if (route === null || own.length >= DURATION_WINDOW / 10) return own;
  return deps.store.recentDurations({ endpoint: run.endpoint, limit: DURATION_WINDOW });
}
