/**
 * A provider's progress, kept on its run: only steps of at least 5 % are written (the store gets
 * at most about 20 writes a run), rounded to hundredths; the store announces each (`changed`), which
 * wakes the run's event streams, and with the write queues a `run.progress` webhook event when the
 * run's webhook asked for them (the store merges those to one a second).
 */
import type { AppDeps } from "../deps.js";

const STEP = 0.05;

/**
 * Where the run's job stands in its vendor's queue, kept on the run: written when it changes, at
 * most once a second, except leaving the queue (null), which is written at once.
 */
export function queueReporter(deps: Pick<AppDeps, "store" | "clock">, runId: string) {
  let last: number | null = null;
  let writtenAt = Number.NEGATIVE_INFINITY;
  return (position: number | null) => {
    const now = deps.clock.now().getTime();
    if (position === last || (position !== null && now - writtenAt < 1000)) return;
    last = position;
    writtenAt = now;
    void deps.store.setQueuePosition(runId, position, new Date(now)).catch(() => {}); // advisory, like progress
  };
}

export function progressReporter(deps: Pick<AppDeps, "store" | "clock">, runId: string) {
  let last = 0;
  return (fraction: number) => {
    if (!(fraction - last >= STEP)) return;
    last = fraction;
    const progress = Math.round(Math.min(fraction, 1) * 100) / 100;
    void deps.store.setProgress(runId, progress, deps.clock.now()).catch(() => {}); // progress is advisory: a lost write costs nothing
  };
}
