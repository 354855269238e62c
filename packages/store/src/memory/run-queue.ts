/** MemoryStore's queue: queued run ids, oldest first by (createdAt, id), as Postgres claims them. */
import type { Environment, NewRun, RunRecord } from "../types.js";
import { copy } from "./copy.js";

/**
 * An admitted run as it starts: queued, nothing charged, delivered or leased yet. Its input and
 * metadata are copies: the caller's objects stay the caller's.
 */
export const queuedRun = (run: NewRun, environment: Environment): RunRecord => ({
  // Named field by field: spreading the caller's object took a slow generic path (a tenth of a submit).
  id: run.id,
  organizationId: run.organizationId,
  apiKeyId: run.apiKeyId,
  endpoint: run.endpoint,
  input: copy(run.input),
  webhookUrl: run.webhookUrl,
  metadata: copy(run.metadata),
  unitPrice: run.unitPrice,
  reservedSeconds: run.reservedSeconds,
  reserved: run.reserved,
  createdAt: new Date(run.createdAt.getTime()),
  environment,
  status: "queued",
  charged: null,
  billableSeconds: null,
  output: null,
  error: null,
  progress: null,
  startedAt: null,
  completedAt: null,
  leaseOwner: null,
  leaseExpiresAt: null,
  attempts: 0,
  upstream: null,
  provider: null,
});

export class RunQueue {
  /** Insertion order is queue order (admission order, kept by `putBack`). */
  private readonly ids = new Map<string, true>();

  constructor(private readonly runs: ReadonlyMap<string, RunRecord>) {}

  /** A newly admitted run goes last: admission order is creation order. */
  push(id: string): void {
    this.ids.set(id, true);
  }

  remove(id: string): void {
    this.ids.delete(id);
  }

  /** A run back from processing (a lease lost, a full provider) goes back to its place. */
  putBack(run: RunRecord): void {
    const queued = [...this.ids.keys(), run.id]
      .map((id) => this.runs.get(id) as RunRecord)
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    this.ids.clear();
    for (const r of queued) this.ids.set(r.id, true);
  }

  /** Takes up to `limit` queued runs, oldest first; runs `skip` names stay in place. */
  take(limit: number, skip: (run: RunRecord) => boolean): RunRecord[] {
    const taken: RunRecord[] = [];
    for (const id of this.ids.keys()) {
      if (taken.length >= limit) break;
      const run = this.runs.get(id);
      if (run?.status === "queued" && skip(run)) continue;
      this.ids.delete(id);
      if (run?.status === "queued") taken.push(run);
    }
    return taken;
  }
}
