/** MemoryStore's queue: queued run ids, oldest first by (createdAt, id), as Postgres claims them. */
import type { RunRecord } from "../types.js";

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
