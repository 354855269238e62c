/**
 * The queue's order (docs/decisions.md, "Fair queues"). When runs wait for the same capacity,
 * the next run comes from the organization with the fewest runs processing relative to its
 * weight; ties go to the organization served least recently (never served first). Within an
 * organization, a higher key priority starts first, then first come, first served. Priority
 * orders an organization's own runs only: it never takes another organization's share.
 */

export const KEY_PRIORITIES = ["low", "normal", "high"] as const;
export type KeyPriority = (typeof KEY_PRIORITIES)[number];

/** The rank stored with a run: higher starts first within its organization. */
export const PRIORITY_RANK: Readonly<Record<KeyPriority, number>> = { low: -1, normal: 0, high: 1 };

export const DEFAULT_QUEUE_WEIGHT = 1;
export const MAX_QUEUE_WEIGHT = 1000;

export interface OrganizationShare {
  organizationId: string;
  /** At least 1; an organization of weight 2 gets twice the share of one of weight 1. */
  weight: number;
  /** Its runs processing now, across all capacity. */
  processing: number;
  /**
   * Its last turn: a number that grows with each run started. Null, or (as the stores keep it) an
   * arrival turn below every turn served: never served, so first on a tie.
   */
  lastTurn: number | null;
}

/**
 * Negative when `a` is served before `b`. `processing / weight` is compared by cross-multiplying,
 * so equal shares tie exactly (Postgres compares the same quotients as float8: equal rationals
 * round to the same double).
 */
export function compareShares(a: OrganizationShare, b: OrganizationShare): number {
  const share = a.processing * b.weight - b.processing * a.weight;
  if (share !== 0) return share;
  if (a.lastTurn !== b.lastTurn) {
    if (a.lastTurn === null) return -1;
    if (b.lastTurn === null) return 1;
    return a.lastTurn - b.lastTurn;
  }
  return a.organizationId < b.organizationId ? -1 : a.organizationId > b.organizationId ? 1 : 0;
}

/** The organization whose run starts next, of those with a run waiting; undefined when none. */
export function nextOrganization<T extends OrganizationShare>(waiting: readonly T[]): T | undefined {
  let best: T | undefined;
  for (const candidate of waiting) if (!best || compareShares(candidate, best) < 0) best = candidate;
  return best;
}

export interface QueuedPlace {
  id: string;
  /** `PRIORITY_RANK` of the key that submitted it. */
  priority: number;
  createdAt: Date;
}

/** Within one organization: higher priority first, then oldest, then by id. */
export function compareQueued(a: QueuedPlace, b: QueuedPlace): number {
  return (
    b.priority - a.priority ||
    a.createdAt.getTime() - b.createdAt.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  );
}

export interface QueueOrganization extends OrganizationShare {
  /** Its runs queued for the same capacity as the run being placed. */
  queued: number;
}

/**
 * How many queued runs start before a run, under the fair-share order: the run's organization
 * `own`, with `aheadInOrganization` of its runs ahead of it, against the other organizations
 * waiting for the same capacity.
 *
 * The organization's `k`th waiting run (from 0) starts when `(processing + k) / weight` is the
 * lowest share, so another organization's runs ahead are those whose share comes lower (or equal,
 * winning the tie on turns). This takes processing counts as they are now: runs ending change
 * them for every organization alike, so the order holds, and a position counts down as runs
 * start. It is exact while nobody's processing count moves but by the starts it counts.
 */
/**
 * Whether `other`'s run `n` starts before `own`'s run `k` when their shares tie. A start gives its
 * organization the newest turn, so the tie goes to the one whose previous start came first: the
 * one not yet served from the queue (its turn is older than any start to come), else the one whose
 * previous run started at the lower share; on equal shares the question is the same one level down.
 */
function winsTie(other: OrganizationShare, n: number, own: OrganizationShare, k: number): boolean {
  for (; n > 0 && k > 0; n--, k--) {
    const previous = (other.processing + n - 1) * own.weight - (own.processing + k - 1) * other.weight;
    if (previous !== 0) return previous < 0;
  }
  if (n === 0 && k === 0) return compareShares({ ...other, processing: 0 }, { ...own, processing: 0 }) < 0;
  return n === 0;
}

export function queuePosition(
  own: OrganizationShare,
  aheadInOrganization: number,
  others: readonly QueueOrganization[],
): number {
  const ownLoad = own.processing + aheadInOrganization;
  let ahead = aheadInOrganization;
  for (const other of others) {
    if (other.organizationId === own.organizationId || other.queued <= 0) continue;
    // Runs n of `other` with (other.processing + n) / other.weight below ownLoad / own.weight:
    // n < numerator / own.weight.
    const numerator = ownLoad * other.weight - other.processing * own.weight;
    let count = numerator > 0 ? Math.ceil(numerator / own.weight) : 0;
    if (numerator >= 0 && numerator % own.weight === 0 && winsTie(other, count, own, aheadInOrganization)) {
      count += 1;
    }
    ahead += Math.min(count, other.queued);
  }
  return ahead;
}
