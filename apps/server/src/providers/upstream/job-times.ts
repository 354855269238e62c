/**
 * How long a route's recent vendor jobs took, from the create to their end: what sets how long a
 * run waits for the webhook of a job whose create answer was lost (twice the slow, p90, jobs).
 */

/** Jobs whose length is kept. */
const KEPT = 50;
/** Fewer jobs than this say nothing yet: the longest wait applies. */
const ENOUGH = 5;
/** The wait is never shorter than this. */
const MIN_WAIT_MS = 30_000;

export class JobTimes {
  private readonly times: number[] = [];

  record(ms: number): void {
    this.times.push(ms);
    if (this.times.length > KEPT) this.times.shift();
  }

  /** Twice the p90 of the kept jobs, at least 30 s, at most `mostMs` (all of it until enough jobs are known). */
  waitMs(mostMs: number): number {
    if (this.times.length < ENOUGH) return mostMs;
    const sorted = [...this.times].sort((a, b) => a - b);
    const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))] ?? mostMs;
    return Math.min(mostMs, Math.max(MIN_WAIT_MS, 2 * p90));
  }
}
