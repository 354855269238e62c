/**
 * A provider's progress, kept on its run: only steps of at least 5 % are written (the store gets
 * at most about 20 writes a run), rounded to hundredths; the store announces each (`changed`), which
 * wakes the run's event streams.
 */
import type { AppDeps } from "../deps.js";

const STEP = 0.05;

export function progressReporter(deps: Pick<AppDeps, "store">, runId: string) {
  let last = 0;
  return (fraction: number) => {
    if (!(fraction - last >= STEP)) return;
    last = fraction;
    void deps.store.setProgress(runId, Math.round(Math.min(fraction, 1) * 100) / 100).catch(() => {}); // progress is advisory: a lost write costs nothing
  };
}
