/**
 * The prediction a Replicate create made when its answer was lost: from the predictions list
 * around the create (each with its model, version and input, not its webhook), the one whose
 * target and input are what the run sent and that no other run holds. When several could be it,
 * the webhook that names the run (sent at the prediction's start) tells which.
 */
import { isDeepStrictEqual } from "node:util";
import { isOfTarget, type ReplicateTarget } from "./replicate-model.js";
import type { VendorSide } from "./types.js";
import { awaitHookedJob, type Found } from "./upstream/create-once.js";
import type { VendorClient } from "./upstream/vendor-client.js";

/** The list is searched this far around the create (clocks differ). */
const LIST_MARGIN_MS = 120_000;
/** Pages of the list read at most. */
const LIST_PAGES = 20;
/** The wait for the webhook that tells which of several look-alike predictions is the run's. */
const TELL_APART_MS = 60_000;

export interface LostCreate<J extends { id: string }> {
  client: VendorClient;
  target: ReplicateTarget;
  vendor: VendorSide | undefined;
  /** The prediction as the run follows it, from its id and the URLs the list gave. */
  followed(id: string, urls: Record<string, unknown>): J;
  input: Record<string, unknown>;
  /** When the create was sent (ms since the epoch). */
  sentAt: number;
  deadline: number;
  signal: AbortSignal;
}

export async function findLostPrediction<J extends { id: string }>(lost: LostCreate<J>): Promise<Found<J>> {
  const { client, vendor, deadline, signal } = lost;
  const after = new Date(lost.sentAt - LIST_MARGIN_MS).toISOString();
  const before = new Date(client.now() + LIST_MARGIN_MS).toISOString();
  let url: string | null =
    `v1/predictions?created_after=${encodeURIComponent(after)}&created_before=${encodeURIComponent(before)}`;
  const candidates: J[] = [];
  for (let page = 0; url && page < LIST_PAGES; page++) {
    const { body } = await client.call(signal, deadline, { method: "GET", url });
    const { results, next } = (body ?? {}) as { results?: unknown; next?: unknown };
    for (const item of Array.isArray(results) ? results : []) {
      const p = (item ?? {}) as Record<string, unknown>;
      if (
        typeof p.id !== "string" ||
        !isOfTarget(lost.target, p) ||
        !isDeepStrictEqual(p.input, lost.input)
      ) {
        continue;
      }
      if (vendor && (await vendor.heldByAnotherRun(p.id))) continue;
      const urls = p.urls && typeof p.urls === "object" ? (p.urls as Record<string, unknown>) : {};
      candidates.push(lost.followed(p.id, urls));
    }
    url = typeof next === "string" && next !== "" ? next : null;
  }
  const [only] = candidates;
  if (candidates.length === 1 && only) return { job: only };
  if (candidates.length === 0) return { none: true, sure: true };
  if (!vendor?.hookUrl) return { none: true, sure: false };
  const windowMs = Math.min(TELL_APART_MS, Math.max(0, deadline - client.now()));
  const id = await awaitHookedJob(vendor, { windowMs, now: () => client.now(), signal });
  const named = candidates.find((candidate) => candidate.id === id);
  return named ? { job: named } : { none: true, sure: false };
}
