/**
 * After a held request whose answer was lost (its connection dropped once it had gone out, or a
 * gateway's 502/504): the output of a prediction it left can reach no one (Cog hands it only to
 * that request, and forgets the prediction once ended), so probes follow the prediction, and it
 * is cancelled, until none of the run is in flight; the caller then creates it again. coglet
 * cancels it too, as the request dropped (crates/coglet/src/service.rs, SyncPredictionGuard),
 * before its model ran if it was still `starting`; a gateway closes its connection to Cog when it
 * gives up, so Cog sees that drop too. The run's vendor log says whether the lost prediction's
 * model ran (`uncertain`: paid twice) or was caught `starting` (not paid).
 */
import type { Logger } from "pino";
import type { CogPrediction } from "./cog-held-put.js";
import type { VendorSide } from "./types.js";
import type { VendorError, VendorResponse } from "./upstream/vendor-http.js";

/** What the recovery of a lost answer works with: the held prediction's own steps. */
export interface LostAnswer {
  /** The prediction's id. */
  id: string;
  vendor: VendorSide | undefined;
  log: Logger | undefined;
  /** Stops the recovery (its reason thrown). */
  signal: AbortSignal;
  /** A probe saw the lost request's prediction past `starting`: its model ran. */
  modelRan: boolean;
  probe(signal: AbortSignal): Promise<VendorResponse>;
  record(): void;
  /** Tells Cog to cancel; true when it accepted. */
  cancel(): Promise<boolean>;
  /** Waits before the next try; throws `failure` at the deadline. */
  backOff(failures: number, retryAfter: string | null, failure: VendorError): Promise<void>;
  /** Waits one poll interval. */
  pause(): Promise<void>;
}

/** Probes and cancels until none of the run is in flight, and says so in the vendor log. */
export async function recoverLostAnswer(lost: LostAnswer, failure: VendorError): Promise<void> {
  const { vendor, id, log, signal } = lost;
  log?.warn({ reason: failure.message }, "the answer to the prediction's request was lost");
  await vendor?.log("create_unanswered", id, failure.message);
  let ran = lost.modelRan;
  let caughtStarting = false;
  let cancelled = false;
  for (let failures = 0; ; ) {
    const answer = await lost.probe(signal).catch(() => null);
    signal.throwIfAborted();
    // Refused: none in flight (Cog ≤ 0.16 validates first: the next PUT finds its one, 202).
    if (answer?.status === 422) break;
    if (answer?.status !== 202) {
      await lost.backOff(failures++, answer?.headers.get("retry-after") ?? null, failure);
      continue;
    }
    lost.record();
    if ((answer.body as CogPrediction | null)?.status === "starting") caughtStarting = true;
    else ran = true;
    if (!cancelled) cancelled = await lost.cancel();
    await lost.pause();
  }
  if (ran || !caughtStarting) {
    const why = ran
      ? "two predictions of the run ran: the lost one's model ran, and its output reaches no one"
      : "the lost prediction ended unseen: its model may have run";
    log?.warn(why);
    await vendor?.log("uncertain", id, why);
  }
  const detail = ran || !caughtStarting ? null : "the lost prediction was cancelled before its model ran";
  await vendor?.log("created_again", id, detail);
}
