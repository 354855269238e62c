/**
 * What both adapters answer for a keyed submit that core's `decideIdempotency` says is not new:
 * one mapping, so the two stores cannot drift. Both check in the same order: the organization and
 * key exist, then the idempotency record, then revocation, then `decideAdmission`.
 */
import type { IdempotencyDecision } from "@refvid/core";
import type { AdmitResult } from "./types.js";

/** The answer for a decision about an earlier request with the key; null when the request is new. */
export function idempotencyAnswer(decision: IdempotencyDecision): AdmitResult | null {
  switch (decision.kind) {
    case "new":
      return null;
    case "mismatch":
      return { kind: "idempotency_mismatch" };
    case "pending":
      return { kind: "idempotency_pending", runId: decision.runId };
    case "replay":
      return {
        kind: "idempotency_replay",
        runId: decision.runId,
        status: decision.status,
        body: decision.body,
      };
  }
}
