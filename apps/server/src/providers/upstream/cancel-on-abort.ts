/**
 * When a vendor job is cancelled: once nobody follows it any more (the run was cancelled, timed
 * out, or following it failed), so that no vendor keeps running (and billing) a job whose output
 * nobody collects. Not after the model's own failure (the job has ended), and not when the run
 * goes on elsewhere (`LeaveUpstreamRunning`): the worker that resumes it follows the same job.
 */
import { LeaveUpstreamRunning, ProviderError } from "../types.js";

/** Whether a provider stopped by `signal` should cancel its vendor job. */
export const cancelsUpstream = (signal: AbortSignal): boolean =>
  !(signal.aborted && signal.reason instanceof LeaveUpstreamRunning);

/** Whether a vendor job whose following ended with `err` should be cancelled. */
export const cancelsUpstreamAfter = (err: unknown, signal: AbortSignal): boolean =>
  !(err instanceof ProviderError) && cancelsUpstream(signal);

/**
 * Follows a vendor job to its end; when following fails, cancels the job (see
 * `cancelsUpstreamAfter`) and rethrows, the run's abort reason first.
 */
export async function followOrCancel<T>(
  signal: AbortSignal,
  follow: () => Promise<T>,
  cancel: () => Promise<void>,
): Promise<T> {
  try {
    return await follow();
  } catch (err) {
    if (cancelsUpstreamAfter(err, signal)) await cancel();
    throw signal.aborted ? signal.reason : err;
  }
}
