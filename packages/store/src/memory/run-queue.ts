/**
 * MemoryStore's queue, in the fair-share order Postgres claims in (core/fair-share.ts): one queue
 * per organization in `compareQueued` order, each organization's processing count and last turn.
 */
import { nextOrganization, type OrganizationShare, type QueueOrganization } from "@refvid/core";
import type { QueueStanding, RunRecord } from "../types.js";

/**
 * An organization never served has its arrival turn less this: it comes before every organization
 * served, and newcomers in the order they arrived (as in Postgres, migration 000019).
 */
const ARRIVAL_OFFSET = 1e15;

interface Turn {
  turn: number;
  previous: number | null;
}

export class RunQueue {
  /** Queued run ids per organization, in the order they start. */
  private readonly queues = new Map<string, string[]>();
  private readonly processing = new Map<string, number>();
  private readonly turns = new Map<string, Turn>();
  private lastTurn = 0;

  constructor(
    private readonly runs: ReadonlyMap<string, RunRecord>,
    private readonly weightOf: (organizationId: string) => number,
  ) {}

  /**
   * A newly admitted run (or one back from processing) goes to its place in its organization's
   * queue: by priority, then time; the same priority and time, in admission order.
   */
  push(id: string): void {
    const run = this.runs.get(id) as RunRecord;
    if (!this.turns.has(run.organizationId)) {
      this.turns.set(run.organizationId, { turn: ++this.lastTurn - ARRIVAL_OFFSET, previous: null });
    }
    const queue = this.queues.get(run.organizationId) ?? [];
    this.queues.set(run.organizationId, queue);
    let lo = 0;
    let hi = queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      // After every run that starts before it or with it: runs of the same priority and time keep
      // their admission order.
      const before = this.runs.get(queue[mid] as string) as RunRecord;
      const order = run.priority - before.priority || before.createdAt.getTime() - run.createdAt.getTime();
      if (order <= 0) lo = mid + 1;
      else hi = mid;
    }
    queue.splice(lo, 0, id);
  }

  /** The run leaves the queue or processing for good (it ended). */
  remove(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    if (run.status === "processing") this.addProcessing(run.organizationId, -1);
    const queue = this.queues.get(run.organizationId);
    const at = queue?.indexOf(id) ?? -1;
    if (queue && at >= 0) queue.splice(at, 1);
  }

  /**
   * A run back from processing goes back to its place. `unstarted`: its claim is undone (the
   * provider was full), so its organization gets back the turn the claim took.
   */
  putBack(run: RunRecord, unstarted = false): void {
    this.addProcessing(run.organizationId, -1);
    if (unstarted) {
      const turn = this.turns.get(run.organizationId);
      if (turn) this.turns.set(run.organizationId, { turn: turn.previous ?? turn.turn, previous: null });
    }
    this.push(run.id);
  }

  /**
   * Takes up to `limit` queued runs, one at a time in the fair-share order, each counted as
   * processing before the next is chosen; runs `skip` names stay in place.
   */
  take(limit: number, skip: (run: RunRecord) => boolean): RunRecord[] {
    const taken: RunRecord[] = [];
    while (taken.length < limit) {
      const heads = new Map<string, RunRecord>();
      for (const [organizationId, queue] of this.queues) {
        for (const id of queue) {
          const run = this.runs.get(id) as RunRecord;
          if (skip(run)) continue;
          heads.set(organizationId, run);
          break;
        }
      }
      const org = nextOrganization([...heads.keys()].map((id) => this.shareOf(id)));
      if (!org) break;
      const run = heads.get(org.organizationId) as RunRecord;
      const queue = this.queues.get(org.organizationId) as string[];
      queue.splice(queue.indexOf(run.id), 1);
      if (queue.length === 0) this.queues.delete(org.organizationId);
      this.addProcessing(org.organizationId, 1);
      this.turns.set(org.organizationId, { turn: ++this.lastTurn, previous: org.lastTurn });
      taken.push(run);
    }
    return taken;
  }

  /** A queued run's standing (`Store.queueStanding`), given the runs holding its capacity. */
  standing(run: RunRecord, running: readonly RunRecord[]): Omit<QueueStanding, "arrivalsByOthers"> {
    const queue = this.queues.get(run.organizationId) ?? [];
    let aheadInOrganization = 0;
    for (const id of queue) {
      if (id === run.id) break;
      if ((this.runs.get(id) as RunRecord).endpoint === run.endpoint) aheadInOrganization += 1;
    }
    const others: QueueOrganization[] = [];
    for (const [organizationId, ids] of this.queues) {
      if (organizationId === run.organizationId) continue;
      const queued = ids.filter((id) => (this.runs.get(id) as RunRecord).endpoint === run.endpoint).length;
      if (queued > 0) others.push({ ...this.shareOf(organizationId), queued });
    }
    return {
      own: this.shareOf(run.organizationId),
      aheadInOrganization,
      others,
      runningSince: running.map((r) => r.startedAt).filter((at): at is Date => at !== null),
    };
  }

  private shareOf(organizationId: string): OrganizationShare {
    return {
      organizationId,
      weight: this.weightOf(organizationId),
      processing: this.processing.get(organizationId) ?? 0,
      lastTurn: this.turns.get(organizationId)?.turn ?? null,
    };
  }

  private addProcessing(organizationId: string, delta: number): void {
    this.processing.set(organizationId, Math.max(0, (this.processing.get(organizationId) ?? 0) + delta));
  }
}
