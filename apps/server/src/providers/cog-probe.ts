/**
 * Probes of a held prediction: a PUT of the run's id with an input no model accepts, which can
 * reattach to the prediction in flight (202 with its state) but never start one. While the held
 * request is unanswered they record the job once Cog took it and report the model's progress.
 */
import { type Scheduler, sleep } from "../clock.js";
import type { CogPrediction } from "./cog-held-put.js";
import { retryAfterMs, type VendorCall, type VendorResponse, vendorFetch } from "./upstream/vendor-http.js";

/** An input no model accepts: a probe with it can reattach to a prediction, never start one. */
const PROBE_INPUT: readonly unknown[] = [];
const PROBE_TIMEOUT_MS = 10_000;

/** PUT of `path` with an input no model takes: 202 with the prediction in flight, if any. */
export function probePrediction(call: VendorCall, path: string): Promise<VendorResponse> {
  return vendorFetch(
    { ...call, attemptTimeoutMs: PROBE_TIMEOUT_MS },
    {
      method: "PUT",
      url: path,
      body: { input: PROBE_INPUT },
      accept: [409, 422, 429, 500, 502, 503, 504],
      once: true,
    },
  );
}

/** What the watch of a held request works with. */
export interface HeldWatch {
  scheduler: Scheduler;
  pollMs: number;
  /** A request unanswered this long was taken. */
  acceptAfterMs: number;
  /** Whether the job is on the run already (nothing to record once taken). */
  recorded: boolean;
  now(): number;
  probe(signal: AbortSignal): Promise<VendorResponse>;
  /** Keeps the job on the run (once). */
  record(): void;
  /** A probe saw the prediction in flight. */
  seen(prediction: CogPrediction | null): void;
}

/** While the held request is unanswered: records the job once taken, and reports progress. */
export async function watchHeld(answered: AbortSignal, watch: HeldWatch): Promise<void> {
  const { scheduler, acceptAfterMs } = watch;
  const started = watch.now();
  const offAccept = watch.recorded ? () => {} : scheduler.setTimeout(() => watch.record(), acceptAfterMs);
  try {
    for (let wait: number | null = watch.pollMs; wait !== null; ) {
      await sleep(scheduler, wait, answered);
      if (answered.aborted) return;
      wait = await probe(watch, answered, watch.now() - started >= acceptAfterMs);
    }
  } finally {
    offAccept();
  }
}

/** One probe; answers the wait before the next, or null when probes cannot see the prediction. */
async function probe(watch: HeldWatch, answered: AbortSignal, longHeld: boolean): Promise<number | null> {
  const { pollMs } = watch;
  try {
    const answer = await watch.probe(answered);
    if (answer.status === 202) {
      watch.record();
      watch.seen(answer.body as CogPrediction | null);
      return pollMs;
    }
    // Refused while our own request has long been held: this Cog validates before it reattaches.
    if (answer.status === 422 && longHeld) return null;
    const asked = retryAfterMs(answer.headers.get("retry-after"), watch.now());
    return answer.status === 429 || answer.status >= 500 ? Math.max(asked ?? 0, pollMs * 2) : pollMs;
  } catch {
    // Unanswered in time (or the held request ended): the held request still carries the result.
    return pollMs * 2;
  }
}
