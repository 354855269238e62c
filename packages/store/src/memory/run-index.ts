/**
 * MemoryStore's search index: run records in keyset order per organization and environment, per
 * key and overall (newest last), so a page costs O(page + runs skipped by filters) and a cursor or
 * a window is found by binary search, not O(history).
 */
import type { AdminRunSearch, Environment, RunRecord, RunSearch } from "../types.js";
import { KeysetList, listIn, mergeNewestFirst, take } from "./keyset-list.js";

export { newestFirst } from "./keyset-list.js";

const scopeOf = (organizationId: string, environment: Environment) => `${environment}\u0000${organizationId}`;
const ENVIRONMENTS: readonly Environment[] = ["live", "test"];

export class RunIndex {
  private readonly byScope = new Map<string, KeysetList<RunRecord>>();
  private readonly byKey = new Map<string, KeysetList<RunRecord>>();
  private readonly all = new KeysetList<RunRecord>();

  /** Adds an admitted run (the live record). */
  add(run: RunRecord): void {
    listIn(this.byScope, scopeOf(run.organizationId, run.environment)).add(run);
    listIn(this.byKey, run.apiKeyId).add(run);
    this.all.add(run);
  }

  /** The page of a search, newest first (the live records: copy before handing out). */
  search(search: RunSearch): RunRecord[] {
    const list = search.apiKeyId
      ? this.byKey.get(search.apiKeyId)
      : this.byScope.get(scopeOf(search.organizationId, search.environment));
    return take(list?.descending(search.after) ?? [], search.limit, (run) => matches(run, search));
  }

  /** The page of an operator's search across organizations and environments, newest first. */
  searchAll(search: AdminRunSearch): RunRecord[] {
    const { organizationId, environment, apiKeyId, after } = search;
    let runs: Iterable<RunRecord>;
    if (apiKeyId) runs = this.byKey.get(apiKeyId)?.descending(after) ?? [];
    else if (organizationId) {
      const scopes = environment ? [environment] : ENVIRONMENTS;
      runs = mergeNewestFirst(
        scopes.map((env) => this.byScope.get(scopeOf(organizationId, env))?.descending(after) ?? []),
      );
    } else runs = this.all.descending(after);
    return take(runs, search.limit, (run) => matches(run, search));
  }

  /** Runs created in `[from, to)`, of one organization when given (the live records). */
  *createdBetween(from: Date, to: Date, organizationId?: string): Generator<RunRecord> {
    if (organizationId === undefined) {
      yield* this.all.createdBetween(from, to);
      return;
    }
    for (const env of ENVIRONMENTS)
      yield* this.byScope.get(scopeOf(organizationId, env))?.createdBetween(from, to) ?? [];
  }
}

function matches(run: RunRecord, search: RunSearch | AdminRunSearch): boolean {
  if (search.organizationId !== undefined && run.organizationId !== search.organizationId) return false;
  if (search.environment && run.environment !== search.environment) return false;
  if (search.apiKeyId !== undefined && run.apiKeyId !== search.apiKeyId) return false;
  if (search.statuses && !search.statuses.includes(run.status)) return false;
  if (search.endpoint && run.endpoint !== search.endpoint) return false;
  if (search.createdAfter && run.createdAt < search.createdAfter) return false;
  if (search.createdBefore && run.createdAt >= search.createdBefore) return false;
  if ("metadata" in search && search.metadata) {
    for (const [k, v] of Object.entries(search.metadata)) if (run.metadata[k] !== v) return false;
  }
  return true;
}
