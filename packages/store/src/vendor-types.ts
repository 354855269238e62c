/**
 * A run's vendor log: what refvid heard from and did about the vendor jobs behind a run, beyond
 * the one job recorded on it (`RunRecord.upstream`). Vendor webhooks that verified, create calls
 * whose answer was lost and how each was resolved, and jobs found serving no run (orphans).
 * Entries are only ever added.
 */
import type { RunRecord } from "./types.js";

/**
 * - `hook`: a vendor webhook for the run that verified (`detail`: the vendor's status word).
 * - `create_unanswered`: a create call may have reached the vendor, but its answer was lost.
 * - `adopted`: the job a lost create made was found and is now the run's.
 * - `created_again`: no job was found in time, so one more create was sent.
 * - `orphan`: a job for the run that is not the one the run follows.
 * - `cancelled`: refvid cancelled that job (an orphan, or the run's own in favour of an orphan).
 * - `uncertain`: refvid cannot tell whether the vendor holds a second job for the run.
 */
export type VendorEventKind =
  | "hook"
  | "create_unanswered"
  | "adopted"
  | "created_again"
  | "orphan"
  | "cancelled"
  | "uncertain";

export interface VendorEvent {
  runId: string;
  /** The catalog route (provider name) the job belongs to. */
  provider: string;
  /** The vendor's id of the job, when known. */
  upstreamId: string | null;
  kind: VendorEventKind;
  /** The vendor's status word for a hook; a sentence for the others. */
  detail: string | null;
  at: Date;
  /**
   * A hook's body as received, kept when the webhook is the only channel of the job's result (a
   * Cog prediction's end); never listed, read by `vendorHookPayload`.
   */
  payload?: string | null;
}

/** The run's vendor log and the cross-run lookups that adoption and vendor webhooks need. */
export interface VendorLogStore {
  /** The run, whichever organization's: for the service's own use (a vendor webhook names only the run). */
  getRunById(runId: string): Promise<RunRecord | null>;
  /** Adds one entry; a `hook` also wakes the run's worker, in any process (`vendor` event). */
  addVendorEvent(event: VendorEvent): Promise<void>;
  /** The run's entries, oldest first, without their payloads. */
  listVendorEvents(runId: string): Promise<VendorEvent[]>;
  /**
   * The payload kept with the run's latest hook about `upstreamId` on `provider` whose status word
   * is `status`; null when there is none.
   */
  vendorHookPayload(input: {
    runId: string;
    provider: string;
    upstreamId: string;
    status: string;
  }): Promise<string | null>;
  /** The run that recorded this vendor job as its own (`recordUpstream`), or null. */
  findRunByUpstream(input: { provider: string; upstreamId: string }): Promise<string | null>;
}
