/**
 * When a queued run should start and end, with a range (docs/decisions.md, "Fair queues"), from
 * recent run durations of its model and route and the capacity ahead of it. Pure: the store reads
 * the window and the runs in progress; this decides.
 */

/** Fewer recent runs than this and no estimate is given: it would be a guess. */
export const MIN_DURATION_SAMPLES = 3;

/** z for the 90th percentile of a normal distribution. */
const Z90 = 1.2816;

export interface DurationStats {
  count: number;
  meanMs: number;
  sdMs: number;
  p50Ms: number;
  p90Ms: number;
}

function quantile(sorted: readonly number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (at - lo);
}

/** Summary of a window of run durations (ms); null when it holds too few to say anything. */
export function durationStats(samplesMs: readonly number[]): DurationStats | null {
  if (samplesMs.length < MIN_DURATION_SAMPLES) return null;
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const meanMs = sorted.reduce((sum, d) => sum + d, 0) / sorted.length;
  const variance = sorted.reduce((sum, d) => sum + (d - meanMs) ** 2, 0) / (sorted.length - 1);
  return {
    count: sorted.length,
    meanMs,
    sdMs: Math.sqrt(variance),
    p50Ms: quantile(sorted, 0.5),
    p90Ms: quantile(sorted, 0.9),
  };
}

export interface Range {
  p50: Date;
  p90: Date;
}

export interface QueueEstimate {
  start: Range;
  end: Range;
}

export interface EstimateInput {
  now: Date;
  /** Queued runs that start before this one (`queuePosition`). */
  ahead: number;
  /** Runs the capacity serves at once: the provider's `max_concurrency`, or the workers' slots. */
  capacity: number;
  /** How long each run holding the capacity now has been processing (ms). */
  runningElapsedMs: readonly number[];
  /** Recent durations (ms) of this model's runs on this route: the sliding window. */
  samplesMs: readonly number[];
  /**
   * Runs per ms that arrive while this one waits and start before it: other organizations' new
   * runs, which the fair share puts ahead of a run whose organization already has runs going.
   */
  overtakeRatePerMs?: number;
}

/** Overtaking runs never take more than this share of the capacity in an estimate. */
const MAX_OVERTAKE_LOAD = 0.9;
/** How much more the number of overtaking runs varies than a steady stream's would. */
const OVERTAKE_BURSTINESS = 3;

/**
 * How long a run that has been going `elapsedMs` still takes, at quantile `q`: the window's
 * durations longer than `elapsedMs`, less what has passed. A run past every duration seen is
 * taken to end within a tenth of a typical run.
 */
function remainingMs(sorted: readonly number[], elapsedMs: number, q: number, typicalMs: number): number {
  const longer = sorted.filter((d) => d > elapsedMs).map((d) => d - elapsedMs);
  return longer.length > 0 ? quantile(longer, q) : typicalMs * 0.1 * q;
}

/**
 * Slots free up as the runs holding them end (each run's remaining time from the window, given how
 * long it has gone) and then once every run's duration; the run takes the slot that frees
 * `ahead`-th. The p50 path uses mean durations, which sum to the median of a long wait; the p90
 * path adds the spread of the sum of the durations before it. Null without enough history.
 */
export function estimateQueue(input: EstimateInput): QueueEstimate | null {
  const stats = durationStats(input.samplesMs);
  if (!stats) return null;
  const sorted = [...input.samplesMs].sort((a, b) => a - b);
  const capacity = Math.max(1, input.capacity, input.runningElapsedMs.length);
  const idle = capacity - input.runningElapsedMs.length;
  const freeAt = (q: number) =>
    [
      ...Array.from({ length: idle }, () => 0),
      ...input.runningElapsedMs.map((e) => remainingMs(sorted, e, q, stats.p50Ms)),
    ].sort((a, b) => a - b);
  const slot = input.ahead % capacity;
  const rounds = Math.floor(input.ahead / capacity);
  // Runs that overtake it take their share of the capacity meanwhile: the wait stretches by
  // 1 / (1 - their load).
  const rate = input.overtakeRatePerMs ?? 0;
  const load = Math.min(MAX_OVERTAKE_LOAD, (rate * stats.meanMs) / capacity);
  const stretch = 1 / (1 - load);
  const start50 = ((freeAt(0.5)[slot] as number) + rounds * stats.meanMs) * stretch;
  const spread =
    ((freeAt(0.9)[slot] as number) - (freeAt(0.5)[slot] as number) + Z90 * stats.sdMs * Math.sqrt(rounds)) *
    stretch;
  // How many overtake is itself random, and arrivals come in bursts: their spread counts twice
  // that of a steady (Poisson) stream.
  const overtakers =
    Z90 * OVERTAKE_BURSTINESS * Math.sqrt(rate * start50) * (stats.meanMs / capacity) * stretch;
  const start90 = start50 + Math.sqrt(spread ** 2 + overtakers ** 2);
  const at = (ms: number) => new Date(input.now.getTime() + Math.round(ms));
  return {
    start: { p50: at(start50), p90: at(Math.max(start50, start90)) },
    end: { p50: at(start50 + stats.p50Ms), p90: at(Math.max(start50, start90) + stats.p90Ms) },
  };
}
