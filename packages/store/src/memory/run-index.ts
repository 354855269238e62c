/**
 * MemoryStore's search index: run records in keyset order per organization and environment, per
 * key and overall (newest last), so a page costs O(page + runs skipped by filters) and a cursor or
 * a window is found by binary search, not O(history).
 */
import type { AdminRunSearch, Environment, RunRecord, RunSearch } from "../types.js";
import { copyRun } from "./copy.js";
import { KeysetList, listIn, mergeNewestFirst, take } from "./keyset-list.js";

export { newestFirst } from "./keyset-list.js";

const scopeOf = (organizationId: string, environment: Environment) => `${environment}\u0000${organizationId}`;
const ENVIRONMENTS: readonly Environment[] = ["live", "test"];

export class RunIndex {
  private readonly byScope = new Map<string, KeysetList<RunRecord>>();
  private readonly byKey = new Map<string, KeysetList<RunRecord>>();
  private readonly all = new KeysetList<RunRecord>();
  /** Runs made on the `/v1/videos` surface, per organization and environment. */
  private readonly videosByScope = new Map<string, KeysetList<RunRecord>>();

  /** Adds an admitted run (the live record). */
  add(run: RunRecord): void {
    const scope = scopeOf(run.organizationId, run.environment);
    listIn(this.byScope, scope).add(run);
    if (run.video) listIn(this.videosByScope, scope).add(run);
    listIn(this.byKey, run.apiKeyId).add(run);
    this.all.add(run);
  }

  /** The page of a search, newest first (the live records: copy before handing out). */
  search(search: RunSearch): RunRecord[] {
    const scope = scopeOf(search.organizationId, search.environment);
    const list = search.apiKeyId
      ? this.byKey.get(search.apiKeyId)
      : (search.videos ? this.videosByScope : this.byScope).get(scope);
    const runs = search.oldestFirst ? list?.ascending(search.after) : list?.descending(search.after);
    return take(runs ?? [], search.limit, (run) => matches(run, search));
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

/** `deleteVideo` on the live record: the video of `organizationId`, marked deleted once. */
export function deleteVideo(run: RunRecord | undefined, organizationId: string, now: Date): RunRecord | null {
  if (!run?.video || run.organizationId !== organizationId) return null;
  run.video.deletedAt ??= now;
  return copyRun(run);
}

function matches(run: RunRecord, search: RunSearch | AdminRunSearch): boolean {
  if (search.organizationId !== undefined && run.organizationId !== search.organizationId) return false;
  if (search.environment && run.environment !== search.environment) return false;
  if (search.apiKeyId !== undefined && run.apiKeyId !== search.apiKeyId) return false;
  if ("videos" in search && search.videos && (!run.video || run.video.deletedAt)) return false;
  if (search.statuses && !search.statuses.includes(run.status)) return false;
  if (search.endpoint && run.endpoint !== search.endpoint) return false;
  if (search.createdAfter && run.createdAt < search.createdAfter) return false;
  if (search.createdBefore && run.createdAt >= search.createdBefore) return false;
  if ("metadata" in search && search.metadata) {
    for (const [k, v] of Object.entries(search.metadata)) if (run.metadata[k] !== v) return false;
  }
  return true;
}
