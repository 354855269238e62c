/**
 * Where a queued run stands (docs/decisions.md, "Fair queues"): its position under the fair-share
 * order and when it should start and end. The store reads the counts; core decides. The capacity
 * is the run's first route's provider limit (`max_concurrency`), or the workers' slots
 * (REFVID_WORKER_CONCURRENCY) when the provider has none or a test run goes to the sandbox.
 */
import { estimateQueue, queuePosition, runsInSandbox } from "@refvid/core";
import { MAX_ARRIVALS_COUNTED, type RunRecord, type QueueStanding as StoreStanding } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import type { QueuePlace } from "../views/run-view.js";

/** The sliding window: this many of the model's most recent successes. */
export const DURATION_WINDOW = 100;
/** The window of arrivals that gives the rate at which other organizations' runs come ahead. */
export const ARRIVAL_WINDOW_MS = 15 * 60_000;

export async function queueStanding(
  deps: Pick<AppDeps, "store" | "catalog" | "config" | "clock">,
  run: RunRecord,
): Promise<QueuePlace | null> {
  if (run.status !== "queued") return null;
  const now = deps.clock.now();
  const served = deps.catalog.current.find(run.endpoint);
  const sandboxed = !served || runsInSandbox(run.environment, served.routes);
  const route = sandboxed ? undefined : served.routes[0];
  const capped = route?.maxConcurrency !== undefined;
  const [standing, samples] = await Promise.all([
    deps.store.queueStanding({
      runId: run.id,
      provider: capped ? route?.slot : null,
      arrivalsSince: new Date(now.getTime() - ARRIVAL_WINDOW_MS),
    }),
    durationWindow(deps, run, route?.name ?? null),
  ]);
  if (!standing) return null; // it started meanwhile
  const position = queuePosition(standing.own, standing.aheadInOrganization, standing.others);
  const estimate = estimateQueue({
    now,
    ahead: position,
    capacity: route?.maxConcurrency ?? deps.config.workerConcurrency,
    runningElapsedMs: standing.runningSince.map((since) => Math.max(0, now.getTime() - since.getTime())),
    samplesMs: samples,
    overtakeRatePerMs: overtakeRate(standing, now),
  });
  return { position, estimate };
}

/**
 * The rate of other organizations' new runs that start before this one: they do when their
 * organization's share is below this run's (its organization's runs going and waiting ahead of
 * it, for its weight). Most organizations have little going, so the deeper this run's own share,
 * the more of them overtake: `share / (share + 1)` of them, none at a share of 0.
 */
function overtakeRate(standing: StoreStanding, now: Date): number {
  const share = (standing.own.processing + standing.aheadInOrganization) / standing.own.weight;
  const { count, earliest } = standing.arrivalsByOthers;
  // As many as are counted: they arrived over the time since the earliest of them, not the window.
  const overMs =
    count >= MAX_ARRIVALS_COUNTED && earliest
      ? Math.max(1, now.getTime() - earliest.getTime())
      : ARRIVAL_WINDOW_MS;
  return (count / overMs) * (share / (share + 1));
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
