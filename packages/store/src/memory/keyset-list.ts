/**
 * Records in keyset order, `(createdAt, id)` ascending (newest last), as Postgres's
 * `created_at desc, id desc` indexes read them backwards: a page costs O(page + records skipped by
 * filters), a cursor and a window are found by binary search, never O(history). Records are the
 * store's live objects (only their keyset never changes): copy before handing one out.
 */
import type { Keyset } from "../types.js";

export class KeysetList<T extends Keyset> {
  private readonly items: T[] = [];

  /**
   * Adds a record. Creation order almost always is keyset order, so this is an append; records
   * made in the same millisecond are placed by id.
   */
  add(item: T): void {
    let at = this.items.length;
    while (at > 0 && newestFirst(this.items[at - 1] as T, item) < 0) at--;
    // splice copies into a new backing store more often than push grows one.
    if (at === this.items.length) this.items.push(item);
    else this.items.splice(at, 0, item);
  }

  /** Newest first, from just older than `after` when given. */
  *descending(after?: Keyset): Generator<T> {
    for (let i = after ? this.countOlderThan(after) - 1 : this.items.length - 1; i >= 0; i--) {
      yield this.items[i] as T;
    }
  }

  /** Oldest first, from just newer than `after` when given. */
  *ascending(after?: Keyset): Generator<T> {
    let i = after ? this.countOlderThan(after) : 0;
    const first = this.items[i];
    if (after && first && newestFirst(first, after) === 0) i++;
    for (; i < this.items.length; i++) yield this.items[i] as T;
  }

  /** Records created in `[from, to)`, oldest first. */
  *createdBetween(from: Date, to: Date): Generator<T> {
    const end = this.countOlderThan({ createdAt: to, id: "" });
    for (let i = this.countOlderThan({ createdAt: from, id: "" }); i < end; i++) yield this.items[i] as T;
  }

  /** How many records are strictly older than `key`: the index of the first that is not. */
  private countOlderThan(key: Keyset): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (newestFirst(this.items[mid] as T, key) > 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** The list named `name` in `lists`, made empty the first time. */
export function listIn<T extends Keyset>(lists: Map<string, KeysetList<T>>, name: string): KeysetList<T> {
  let list = lists.get(name);
  if (!list) {
    list = new KeysetList<T>();
    lists.set(name, list);
  }
  return list;
}

/** Up to `limit` items of `items` that `keep` keeps. */
export function take<T>(items: Iterable<T>, limit: number, keep: (item: T) => boolean = () => true): T[] {
  const found: T[] = [];
  if (limit <= 0) return found;
  for (const item of items) {
    if (!keep(item)) continue;
    found.push(item);
    if (found.length >= limit) break;
  }
  return found;
}

/** Newest-first sequences merged into one newest-first sequence. */
export function* mergeNewestFirst<T extends Keyset>(sequences: Iterable<T>[]): Generator<T> {
  const heads = sequences.map((sequence) => {
    const iterator = sequence[Symbol.iterator]();
    return { iterator, next: iterator.next() };
  });
  for (;;) {
    let best: (typeof heads)[number] | undefined;
    for (const head of heads) {
      if (head.next.done) continue;
      if (!best || newestFirst(head.next.value, best.next.value as T) < 0) best = head;
    }
    if (!best || best.next.done) return;
    yield best.next.value;
    best.next = best.iterator.next();
  }
}

/** Keyset order: newer createdAt first, then larger id first. */
export function newestFirst(a: Keyset, b: Keyset): number {
  const byTime = b.createdAt.getTime() - a.createdAt.getTime();
  return byTime !== 0 ? byTime : a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
