/**
 * What a keyed submit does when its `Idempotency-Key` was seen before. Both stores apply this one
 * decision, under the same lock as admission.
 *
 * A record is written in the admission transaction. An asynchronous submit's record holds its
 * response from the start, so it always replays. A sync submit's record is pending until its run
 * ends; a retry then follows the same run rather than being refused, so a crash of the process that
 * admitted it never leaves the key unusable.
 */
import { createHash } from "node:crypto";
import type { Environment } from "./environments.js";
import type { ModelSlug } from "./models/definition.js";

export interface IdempotencyRecord {
  requestHash: string;
  runId: string;
  expiresAt: Date;
  response: { status: number; body: unknown } | null;
}

/** What a keyed submit does; `new` admits it, every other outcome answers from the earlier request. */
export type IdempotencyDecision =
  /** No live record: admit as usual and write one. */
  | { kind: "new" }
  /** The key was used with another request. */
  | { kind: "mismatch" }
  /** Answer with the stored response. */
  | { kind: "replay"; runId: string; status: number; body: unknown }
  /** The first request was a sync submit whose run has not ended: follow the same run. */
  | { kind: "pending"; runId: string };

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

/**
 * The key as stored: an `Idempotency-Key` is scoped to its organization (the store's) and to the
 * environment of the key that sent it, so a test request never replays a live run.
 */
export const scopedIdempotencyKey = (environment: Environment, key: string): string =>
  `${environment}:${key}`;

export function decideIdempotency(
  existing: IdempotencyRecord | null | undefined,
  requestHash: string,
  now: Date,
): IdempotencyDecision {
  if (!existing || existing.expiresAt.getTime() <= now.getTime()) return { kind: "new" };
  if (existing.requestHash !== requestHash) return { kind: "mismatch" };
  if (!existing.response) return { kind: "pending", runId: existing.runId };
  return { kind: "replay", runId: existing.runId, ...existing.response };
}

/** An outcome that answers from the earlier request, as the store hands it back to submit. */
export type EarlierRequestDecision = Exclude<IdempotencyDecision, { kind: "new" }>;

/** Two submits are "the same request" when model and body match, whatever the key order. */
export function hashRequest(slug: ModelSlug, body: unknown): string {
  return createHash("sha256").update(slug).update("\n").update(canonicalJson(body)).digest("hex");
}

/** JSON with object keys sorted and undefined members left out: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
