/**
 * Waiting for a condition that an event usually announces (a run's end, for sync submits), with
 * polling as the backstop: a missed event costs latency, never the answer.
 */
import type { CancelTimer, Scheduler } from "./clock.js";

export interface PollUntilOptions {
  /** Ends the wait; `pollUntil` then answers null. */
  signal: AbortSignal;
  /** The first wait between checks; each next wait doubles, up to `maxDelayMs`. */
  firstDelayMs: number;
  maxDelayMs: number;
  /** Subscribes to the event that makes a check worth doing now; returns the unsubscribe. */
  wake?: (wake: () => void) => () => void;
}

/**
 * Calls `check` until it answers a value (not undefined) and returns it; between calls waits on
 * the scheduler, or less when woken. A wake-up during a check makes the next check immediate.
 */
export async function pollUntil<T>(
  scheduler: Scheduler,
  check: () => Promise<T | undefined>,
  options: PollUntilOptions,
): Promise<T | null> {
  const { signal } = options;
  let woken = false;
  let endWait: () => void = () => {};
  const wake = () => {
    woken = true;
    endWait();
  };
  const unsubscribe = options.wake?.(wake) ?? (() => {});
  signal.addEventListener("abort", wake, { once: true });
  try {
    for (let delay = options.firstDelayMs; !signal.aborted; delay = Math.min(delay * 2, options.maxDelayMs)) {
      woken = false;
      const value = await check();
      if (value !== undefined) return value;
      if (woken || signal.aborted) continue;
      await new Promise<void>((resolve) => {
        let cancel: CancelTimer = () => {};
        endWait = () => {
          cancel();
          endWait = () => {};
          resolve();
        };
        cancel = scheduler.setTimeout(endWait, delay);
      });
    }
    return null;
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", wake);
  }
}
