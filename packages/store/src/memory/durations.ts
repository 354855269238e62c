/**
 * MemoryStore's sliding windows per model: the durations of its last successes, newest first, and
 * its recent arrivals (who submitted a run, when) for the rate of runs that may come ahead.
 */
import type { ModelSlug } from "@refvid/core";
import type { RunRecord } from "../types.js";

/** More than any window asked for: `recentDurations` reads at most this many per model. */
const KEPT = 1000;
/** Arrivals older than this are forgotten; `queueStanding` asks for far less. */
const ARRIVALS_KEPT_MS = 3_600_000;

export class MemoryDurations {
  private readonly byModel = new Map<ModelSlug, { route: string | null; ms: number }[]>();
  private readonly arrivals = new Map<ModelSlug, { organizationId: string; at: number }[]>();

  /** A run admitted: it joins its model's arrivals, oldest first (admission times only grow). */
  arrived(run: RunRecord): void {
    const log = this.arrivals.get(run.endpoint) ?? [];
    this.arrivals.set(run.endpoint, log);
    log.push({ organizationId: run.organizationId, at: run.createdAt.getTime() });
    const cutoff = run.createdAt.getTime() - ARRIVALS_KEPT_MS;
    while ((log[0]?.at ?? cutoff) < cutoff) log.shift();
  }

  /** Runs of the model others than `organizationId` submitted since `since`, newest first, up to `max`. */
  arrivalsByOthers(
    endpoint: ModelSlug,
    organizationId: string,
    since: Date,
    max: number,
  ): { count: number; earliest: Date | null } {
    let count = 0;
    let earliest: number | null = null;
    const log = this.arrivals.get(endpoint) ?? [];
    for (let i = log.length - 1; i >= 0 && count < max; i--) {
      const arrival = log[i] as { organizationId: string; at: number };
      if (arrival.at < since.getTime()) break;
      if (arrival.organizationId === organizationId) continue;
      count += 1;
      earliest = arrival.at;
    }
    return { count, earliest: earliest === null ? null : new Date(earliest) };
  }

  /** A run that succeeded: its start-to-end time joins its model's window. */
  add(run: RunRecord): void {
    if (run.status !== "succeeded" || !run.startedAt || !run.completedAt) return;
    const window = this.byModel.get(run.endpoint) ?? [];
    this.byModel.set(run.endpoint, window);
    window.unshift({ route: run.route, ms: run.completedAt.getTime() - run.startedAt.getTime() });
    if (window.length > KEPT) window.pop();
  }

  readonly recentDurations = async ({
    endpoint,
    route,
    limit,
  }: {
    endpoint: ModelSlug;
    route?: string | null;
    limit: number;
  }): Promise<number[]> =>
    (this.byModel.get(endpoint) ?? [])
      .filter((d) => route === undefined || route === null || d.route === route)
      .slice(0, limit)
      .map((d) => d.ms);
}
