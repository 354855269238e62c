/**
 * MemoryStore's Idempotency-Keys: per organization, each with the run it admitted and the answer a
 * replay returns. Methods the Store port names are bound, so MemoryStore hands them out as its own.
 */
import { decideIdempotency, type EarlierRequestDecision, type IdempotencyRecord } from "@refvid/core";
import type { IdempotencyRequest, IdempotencyResponse } from "../types.js";
import { copy } from "./copy.js";

/** An entry's key: keys are per organization. */
const entryKey = (organizationId: string, key: string) => `${organizationId}\u0000${key}`;

export class MemoryIdempotency {
  private readonly entries = new Map<string, IdempotencyRecord>();

  /** core's decision when the key was used before (and has not expired); null when it is new. */
  earlier(organizationId: string, request: IdempotencyRequest, now: Date): EarlierRequestDecision | null {
    const decision = decideIdempotency(
      this.entries.get(entryKey(organizationId, request.key)),
      request.requestHash,
      now,
    );
    return decision.kind === "new" ? null : decision;
  }

  /** Keeps the key with the run it admitted, and its answer when already known. */
  remember(organizationId: string, request: IdempotencyRequest, runId: string): void {
    this.entries.set(entryKey(organizationId, request.key), {
      requestHash: request.requestHash,
      runId,
      expiresAt: request.expiresAt,
      response: request.response ? copy(request.response) : null,
    });
  }

  readonly completeIdempotency = async (
    organizationId: string,
    key: string,
    response: IdempotencyResponse,
  ) => {
    const entry = this.entries.get(entryKey(organizationId, key));
    if (entry && !entry.response) entry.response = copy(response);
  };

  readonly hasIdempotencyKey = async (organizationId: string, key: string, now: Date) => {
    const entry = this.entries.get(entryKey(organizationId, key));
    return entry !== undefined && entry.expiresAt > now;
  };
}
