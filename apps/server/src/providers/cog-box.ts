/**
 * Predictions left running on a Cog box: a run stopped (cancelled, timed out) while its held
 * request was still open, and Cog did not cancel the prediction. Cog 0.12 cannot: its server serves
 * nothing while a held sync prediction runs, so the cancel goes unanswered, or is answered 404 once
 * the prediction ran to its end (see test/vendors/cog-server.ts); another Cog may accept a cancel
 * and run on. The held request is kept open: its answer says the prediction ended. Until then this
 * process starts no prediction on the box (the run waits in the queue) and `/readyz` shows the box
 * busy with it. Kept per process, by the box's URL.
 */
import type { Clock, Scheduler } from "../clock.js";

export interface UncancellablePrediction {
  predictionId: string;
  /** When Cog was found not to cancel it. */
  since: Date;
}

/** What the box is told of the cancel of a prediction left on it. */
export type CancelOutcome = "accepted" | "refused";

interface Left {
  id: string;
  uncancellable: Date | null;
}

export class CogBoxes {
  private readonly boxes = new Map<string, Set<Left>>();

  /**
   * Keeps `id` on the box until `ended` settles (the held request answered or broke). The
   * returned function takes the cancel's outcome: refused, the prediction is uncancellable now;
   * accepted, it is if it still runs `graceMs` later.
   */
  leave(
    url: string,
    id: string,
    ended: Promise<unknown>,
    time: { clock: Clock; scheduler: Scheduler; graceMs: number },
  ): (outcome: CancelOutcome) => void {
    const key = boxKey(url);
    const left: Left = { id, uncancellable: null };
    const entries = this.boxes.get(key) ?? new Set<Left>();
    this.boxes.set(key, entries.add(left));
    let offGrace = () => {};
    const mark = () => {
      left.uncancellable ??= time.clock.now();
    };
    const settled = () => {
      offGrace();
      entries.delete(left);
      if (entries.size === 0 && this.boxes.get(key) === entries) this.boxes.delete(key);
    };
    ended.then(settled, settled);
    return (outcome) => {
      if (!entries.has(left)) return;
      if (outcome === "refused") mark();
      else offGrace = time.scheduler.setTimeout(mark, time.graceMs);
    };
  }

  /** Whether the box runs a prediction left by a stopped run, other than `except`. */
  busy(url: string, except?: string): boolean {
    return [...(this.boxes.get(boxKey(url)) ?? [])].some((left) => left.id !== except);
  }

  /** The box's prediction that Cog did not cancel (the longest known), or null. */
  uncancellable(url: string): UncancellablePrediction | null {
    let oldest: UncancellablePrediction | null = null;
    for (const { id, uncancellable } of this.boxes.get(boxKey(url)) ?? []) {
      if (uncancellable && (!oldest || uncancellable < oldest.since)) {
        oldest = { predictionId: id, since: uncancellable };
      }
    }
    return oldest;
  }
}

/** This process's Cog boxes: the adapters record on it, `/readyz` reads it. */
export const cogBoxes = new CogBoxes();

function boxKey(url: string): string {
  return URL.canParse(url) ? new URL(url).href.replace(/\/+$/, "") : url;
}
