/**
 * MemoryStore's writes about a processing run as its worker follows the vendor: the vendor job it
 * records (and which run holds each job), its progress and vendor queue position. A progress write
 * queues the run's `run.progress` webhook when it asks for one, and is announced as a change.
 * Methods are bound, so MemoryStore hands them out as its own.
 */
import { webhookGets } from "@refvid/core";
import type * as T from "../types.js";
import type { RunRecord } from "../types.js";
import { copy } from "./copy.js";
import type { MemoryOutbox } from "./outbox.js";

const upstreamKey = (provider: string, id: string) => `${provider}\u0000${id}`;

export class MemoryRunProgress {
  /** Which run recorded each vendor job, by `provider\0id`. */
  private readonly upstreamOwners = new Map<string, string>();

  constructor(
    private readonly runs: ReadonlyMap<string, RunRecord>,
    private readonly outbox: MemoryOutbox,
    /** The run, when it is processing under this worker's lease. */
    private readonly heldBy: (runId: string, workerId: string) => RunRecord | null,
    private readonly onChanged: (runId: string) => void,
  ) {}

  readonly recordUpstream = async ({
    runId,
    workerId,
    upstream,
  }: Parameters<T.Store["recordUpstream"]>[0]) => {
    const run = this.heldBy(runId, workerId);
    if (!run) return false;
    run.upstream = copy(upstream);
    this.upstreamOwners.set(upstreamKey(upstream.provider, upstream.id), runId);
    return true;
  };

  readonly findRunByUpstream = async ({
    provider,
    upstreamId,
  }: Parameters<T.Store["findRunByUpstream"]>[0]) =>
    this.upstreamOwners.get(upstreamKey(provider, upstreamId)) ?? null;

  readonly setQueuePosition = async (runId: string, position: number | null, now: Date) => {
    const run = this.runs.get(runId);
    if (run?.status !== "processing" || (run.queuePosition ?? null) === position) return;
    run.queuePosition = position;
    this.progressed(run, now);
  };

  readonly setProgress = async (runId: string, progress: number, now: Date) => {
    const run = this.runs.get(runId);
    if (run?.status !== "processing") return;
    run.progress = progress;
    this.progressed(run, now);
  };

  private progressed(run: RunRecord, now: Date) {
    if (webhookGets(run, "progress")) this.outbox.progressed(run, now);
    this.onChanged(run.id);
  }
}
