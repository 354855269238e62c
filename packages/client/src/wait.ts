/**
 * Waiting for a run to end by polling `GET /v1/runs/{run_id}` with a growing interval: quick
 * feedback for short runs without hammering the API (and the key's rate limit) for long ones.
 */
import { type Run, type RunStatus, TERMINAL_STATUSES } from "@refvid/api-types";
import { RunTimeoutError } from "./errors.js";
import { sleep } from "./retry.js";

/** How to wait for a run. */
export interface WaitOptions {
  /** Aborting it stops waiting at once; the wait then rejects with `signal.reason` (an `AbortError`). */
  signal?: AbortSignal;
  /**
   * Give up after this long with a {@link RunTimeoutError}: a deadline for the whole wait, not
   * for each poll (each poll is one request, bounded by the client's `timeoutMs`). Default: wait
   * until the run ends.
   */
  timeoutMs?: number;
  /** Called with the run each time its status or progress changes, the terminal state included. */
  onUpdate?: (run: Run) => void;
  /** First interval between polls. Default 1000 ms. */
  pollIntervalMs?: number;
  /** The interval grows by half each poll up to this. Default 10 000 ms. */
  maxPollIntervalMs?: number;
}

/** A function that fetches a run's current state, honouring `signal`. */
export type FetchRun = (runId: string, signal: AbortSignal | undefined) => Promise<Run>;

const DEFAULT_POLL_INTERVAL_MS = 1000;
const DEFAULT_MAX_POLL_INTERVAL_MS = 10_000;
const POLL_BACKOFF_FACTOR = 1.5;

const terminal: ReadonlySet<string> = new Set(TERMINAL_STATUSES);
const inFlight: ReadonlySet<string> = new Set(["queued", "processing"] satisfies RunStatus[]);

/**
 * Whether a run has ended and will never change again: `succeeded`, `failed`, `timeout` or
 * `cancelled`. A status newer than this client (a server may add one) counts as ended when the
 * run has a `completed_at`, which the server sets exactly when a run ends, and as in flight
 * otherwise; so waiting neither stops early nor goes on forever because of it.
 */
export function isTerminal(run: Pick<Run, "status"> & { completed_at?: string | null }): boolean {
  if (terminal.has(run.status)) return true;
  if (inFlight.has(run.status)) return false;
  return run.completed_at != null;
}

function changed(previous: Run | undefined, next: Run): boolean {
  return previous === undefined || previous.status !== next.status || previous.progress !== next.progress;
}

/**
 * Polls `fetchRun` until the run is terminal (see {@link isTerminal}, which covers statuses newer
 * than this client) and returns the terminal run, whatever its status: a failed run is a result,
 * not an exception. `initial`, when given (the run a submit returned), is reported first and
 * saves one poll.
 *
 * @throws {RunTimeoutError} when `timeoutMs` passes first.
 * @throws the signal's reason (an `AbortError`) when `signal` aborts.
 */
export async function waitForRun(
  fetchRun: FetchRun,
  runId: string,
  options: WaitOptions = {},
  initial?: Run,
): Promise<Run> {
  const { onUpdate, timeoutMs } = options;
  const maxInterval = options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS;
  let interval = Math.min(options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, maxInterval);

  // One signal for both ways of stopping, so an in-flight poll or a sleep ends at once either way.
  const timeoutSignal = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const signals = [options.signal, timeoutSignal].filter((s): s is AbortSignal => s !== undefined);
  const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];

  let last = initial;
  if (last !== undefined) {
    onUpdate?.(last);
    if (isTerminal(last)) return last;
  }
  try {
    for (;;) {
      if (last !== undefined) {
        await sleep(interval, signal);
        interval = Math.min(maxInterval, interval * POLL_BACKOFF_FACTOR);
      }
      const run = await fetchRun(runId, signal);
      if (changed(last, run)) onUpdate?.(run);
      last = run;
      if (isTerminal(run)) return run;
    }
  } catch (error) {
    // The caller's abort wins over our deadline: they asked to stop, so they get their reason.
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeoutSignal?.aborted && timeoutMs !== undefined) throw new RunTimeoutError(runId, timeoutMs, last);
    throw error;
  }
}
