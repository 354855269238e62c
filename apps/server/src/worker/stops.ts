/**
 * How the worker stops a run before its provider finished, and what outcome that gives: the abort
 * reasons of a run's signal (a cancel or timeout cancels the vendor job; a shutdown or lost lease
 * leaves it for the next worker), the full-provider and full-disk hand-backs, and the outcome of
 * what was thrown.
 */
import { assertNever, type RunError, RunFailure, runErrors, statusOfRunError } from "@refvid/core";
import type { RunOutcome } from "@refvid/store";
import { LeaveUpstreamRunning, ProviderFull } from "../providers/types.js";
import type { StorageFull } from "../storage-full.js";

/** Why the worker stopped a run before its provider finished: the abort reason of its signal. */
export type StopCause = "timeout" | "cancelled" | "lease_lost" | "shutdown";

export class RunStopped extends Error {
  constructor(readonly why: StopCause) {
    super(`run stopped: ${why.replace("_", " ")}`);
  }
}

export { ProviderFull };

/**
 * The run could not be written to disk (`ENOSPC`, `EDQUOT`): a reference, the video or the blob.
 * Not the run's fault, nor the vendor's: it goes back to the queue untouched, like a run whose
 * provider is full, and this worker pauses its claims a while (docs/decisions.md, "Files and
 * object storage").
 */
export class StorageFullStop {
  constructor(readonly full: StorageFull) {}
}

/** Why an attempt gave its run back to the queue: its provider was full, or the disk was. */
export type HandBack = ProviderFull | StorageFullStop;

/** A stop after which the run goes on elsewhere: its vendor job is left running, to be resumed. */
export class RunLeft extends LeaveUpstreamRunning {
  readonly why: StopCause;
  constructor(why: "lease_lost" | "shutdown") {
    super(`run left: ${why.replace("_", " ")}`);
    this.why = why;
  }
}

export const stopCauseOf = (signal: AbortSignal): StopCause | null =>
  signal.reason instanceof RunStopped || signal.reason instanceof RunLeft ? signal.reason.why : null;

export const stopReason = (cause: StopCause) =>
  cause === "lease_lost" || cause === "shutdown" ? new RunLeft(cause) : new RunStopped(cause);

/**
 * Why a run did not succeed, from what was thrown and why its signal was aborted; null when the
 * worker is shutting down and leaves the run to its lease.
 */
export function outcomeOfError(
  err: unknown,
  stopped: StopCause | null,
  timeoutMs: number,
): RunOutcome | null {
  const failure = err instanceof RunFailure ? err.toRunError() : null;
  switch (stopped) {
    case "shutdown":
      return null;
    case "timeout":
      return ended(runErrors.timeout(timeoutMs));
    case "cancelled":
    case "lease_lost": // the run ended, or goes on, elsewhere: this end is not recorded
      return ended(failure ?? runErrors.interrupted());
    case null:
      return ended(failure ?? runErrors.internal());
    default:
      return assertNever(stopped);
  }
}

const ended = (error: RunError): RunOutcome => ({ status: statusOfRunError(error.type), error });
