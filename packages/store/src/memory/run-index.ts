/**
 * MemoryStore's search index: per organization and environment, run ids in keyset order (newest
 * last), so a page costs O(page + runs skipped by filters) and a cursor is found by binary search,
 * not O(history).
 */
import type { Environment, RunRecord, RunSearch } from "../types.js";

const scopeOf = (organizationId: string, environment: Environment) => `${environment}\u0000${organizationId}`;

export class RunIndex {
  private readonly byScope = new Map<string, string[]>();

  constructor(private readonly runs: ReadonlyMap<string, RunRecord>) {}

  /**
   * Adds an admitted run. Admission order almost always is keyset order, so this is an append;
   * runs admitted in the same millisecond are placed by id.
   */
  add(run: RunRecord): void {
    const scope = scopeOf(run.organizationId, run.environment);
    let ids = this.byScope.get(scope);
    if (!ids) {
      ids = [];
      this.byScope.set(scope, ids);
    }
    let at = ids.length;
    while (at > 0 && newestFirst(this.runOf(ids[at - 1]), run) < 0) at--;
    ids.splice(at, 0, run.id);
  }

  /** The page of a search, newest first (the live records: copy before handing out). */
  search(search: RunSearch): RunRecord[] {
    const ids = this.byScope.get(scopeOf(search.organizationId, search.environment)) ?? [];
    let i = search.after ? this.indexBefore(ids, search.after) : ids.length - 1;
    const found: RunRecord[] = [];
    for (; i >= 0 && found.length < search.limit; i--) {
      const run = this.runs.get(ids[i] as string);
      if (run && matches(run, search)) found.push(run);
    }
    return found;
  }

  /** Index of the newest run in `ids` that is strictly older than `cursor` (-1 if none). */
  private indexBefore(ids: string[], cursor: { createdAt: Date; id: string }): number {
    let lo = 0;
    let hi = ids.length; // first index whose run is not older than the cursor
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newestFirst(this.runOf(ids[mid]), cursor) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  private runOf(id: string | undefined): RunRecord {
    return this.runs.get(id as string) as RunRecord;
  }
}

function matches(run: RunRecord, search: RunSearch): boolean {
  if (search.statuses && !search.statuses.includes(run.status)) return false;
  if (search.endpoint && run.endpoint !== search.endpoint) return false;
  if (search.createdAfter && run.createdAt < search.createdAfter) return false;
  if (search.createdBefore && run.createdAt >= search.createdBefore) return false;
  if (search.metadata) {
    for (const [k, v] of Object.entries(search.metadata)) if (run.metadata[k] !== v) return false;
  }
  return true;
}

/** Keyset order: newer createdAt first, then larger id first. */
export function newestFirst(a: { createdAt: Date; id: string }, b: { createdAt: Date; id: string }): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
