/**
 * A Clock and Scheduler that move only when told to, for tests: `advance(ms)` runs every timer
 * that falls due, in order, at its own due time, and lets pending promise callbacks run after
 * each, so async loops driven by its timers make progress (and set their next timers) within
 * one `advance`. Work waiting on real I/O is not waited for: await its own signal.
 */
import type { CancelTimer, Clock, Scheduler } from "./clock.js";

interface Timer {
  at: number;
  order: number;
  fn: () => void;
}

/** Event-loop turns given to promise callbacks (and quick I/O) after each timer. */
const SETTLE_TURNS = 20;

export class ManualClock implements Clock, Scheduler {
  private current: number;
  private readonly timers: Timer[] = [];
  private order = 0;

  constructor(start: Date = new Date()) {
    this.current = start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  setTimeout(fn: () => void, ms: number): CancelTimer {
    const timer: Timer = { at: this.current + Math.max(0, ms || 0), order: this.order++, fn };
    this.timers.push(timer);
    return () => {
      const index = this.timers.indexOf(timer);
      if (index >= 0) this.timers.splice(index, 1);
    };
  }

  /** Timers set and not yet run or cancelled. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward `ms`, running each timer due by then at its due time. */
  async advance(ms: number): Promise<void> {
    const target = this.current + Math.max(0, ms);
    await settle();
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.timers.splice(this.timers.indexOf(next), 1);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = target;
  }

  private nextDue(target: number): Timer | undefined {
    let next: Timer | undefined;
    for (const timer of this.timers) {
      if (timer.at > target) continue;
      if (!next || timer.at < next.at || (timer.at === next.at && timer.order < next.order)) next = timer;
    }
    return next;
  }
}

/** Lets queued promise callbacks, and the work they start without real waiting, run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < SETTLE_TURNS; i++) await new Promise((resolve) => setImmediate(resolve));
}
