/** The queue's port: where a queued run stands under the fair-share order, and recent durations. */
import type { ModelSlug, OrganizationShare, QueueOrganization } from "@refvid/core";

/**
 * Where queued runs stand (docs/decisions.md, "Fair queues"): the counts core's `queuePosition` and
 * `estimateQueue` need, read from per-organization counters and indexes so that their cost does not
 * grow with the queue.
 */
export interface QueueStore {
  /**
   * A queued run's standing: its organization's share and the runs of its organization ahead of it
   * for the same model, the other organizations with runs of that model waiting, and when each run
   * holding the capacity started (the runs processing on `provider`, or of the model when no
   * provider is given), and how many runs of the model other organizations submitted since
   * `arrivalsSince` (counted up to `MAX_ARRIVALS_COUNTED`). Null unless the run is queued.
   */
  queueStanding(input: {
    runId: string;
    provider?: string | null;
    arrivalsSince: Date;
  }): Promise<QueueStanding | null>;
  /**
   * How long (ms) the last `limit` runs of a model that succeeded took from start to end, newest
   * first; only those that ended on `route`, when given.
   */
  recentDurations(input: { endpoint: ModelSlug; route?: string | null; limit: number }): Promise<number[]>;
}

export interface QueueStanding {
  own: OrganizationShare;
  aheadInOrganization: number;
  /** Organizations other than the run's with runs of its model queued. */
  others: QueueOrganization[];
  /** When each run holding the capacity now started. */
  runningSince: Date[];
  /**
   * Runs of the model other organizations submitted since `arrivalsSince`, the most recent first, up
   * to MAX_ARRIVALS_COUNTED; and when the earliest of those counted was submitted (null: none).
   */
  arrivalsByOthers: { count: number; earliest: Date | null };
}

/**
 * `queueStanding` counts recent arrivals up to this many, the most recent first: enough to tell a
 * rate (over the time they span), never a scan.
 */
export const MAX_ARRIVALS_COUNTED = 1000;
