/** MemoryStore's sliding window of run durations: the last successes of each model, newest first. */
import type { ModelSlug } from "@refvid/core";
import type { RunRecord } from "../types.js";

/** More than any window asked for: `recentDurations` reads at most this many per model. */
const KEPT = 1000;

export class MemoryDurations {
  private readonly byModel = new Map<ModelSlug, { route: string | null; ms: number }[]>();

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
