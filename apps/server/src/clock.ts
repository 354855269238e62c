/**
 * Time as two ports: the Clock reads it, the Scheduler waits on it. Services, the worker, the
 * sweeper and the dispatcher use only these, so tests move time with a `ManualClock` instead of
 * sleeping.
 */
export interface Clock {
  now(): Date;
}

/** Cancels a timer; does nothing once it has run. */
export type CancelTimer = () => void;

export interface Scheduler {
  /** Calls `fn` once, `ms` from now (at once for 0 or less). */
  setTimeout(fn: () => void, ms: number): CancelTimer;
}

export const systemClock: Clock = { now: () => new Date() };

export const systemScheduler: Scheduler = {
  setTimeout(fn, ms) {
    const timer = setTimeout(fn, Math.max(0, ms));
    return () => clearTimeout(timer);
  },
};

/** Resolves after `ms` on the scheduler, or as soon as `signal` aborts (it never rejects). */
export function sleep(scheduler: Scheduler, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    let cancel: CancelTimer = () => {};
    const done = () => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    cancel = scheduler.setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
