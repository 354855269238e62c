/**
 * API keys by hash, as authentication reads them, kept for at most `ttlMs` (900 ms): a busy key is
 * looked up in the store about once a second instead of on every request. A key revoked or changed
 * through this process is forgotten at once; through another process, it is read again within
 * `ttlMs`, so a revoked key stops working everywhere within a second. Money and caps never rest on
 * it: admission re-reads the key under its row lock and refuses a revoked one. See
 * docs/decisions.md, "Hot path".
 */
import type { Store } from "@refvid/store";
import type { Clock } from "../clock.js";
import type { Caller } from "./request-context.js";

/** Past this many keys, expired entries are dropped; past twice as many, all of them. */
const MAX_ENTRIES = 10_000;

export class KeyCache {
  private readonly entries = new Map<string, { caller: Caller | null; expires: number }>();
  private readonly loading = new Map<string, Promise<Caller | null>>();
  /** Bumped by `forget`, so that a lookup started before a change never caches what it read. */
  private generation = 0;

  constructor(
    private readonly store: Pick<Store, "findApiKeyByHash">,
    private readonly clock: Clock,
    readonly ttlMs = 900,
  ) {}

  /** The key and its organization (shared and frozen: never mutate them), or null when unknown. */
  async find(keyHash: string): Promise<Caller | null> {
    const now = this.clock.now().getTime();
    const hit = this.entries.get(keyHash);
    // An entry that would outlive `ttlMs` from now is stale too: the system clock stepped back.
    if (hit && hit.expires > now && hit.expires - now <= this.ttlMs) return hit.caller;
    let pending = this.loading.get(keyHash);
    if (!pending) {
      const generation = this.generation;
      pending = this.store.findApiKeyByHash(keyHash).then((found) => {
        const caller = found ? deepFreeze(found) : null;
        // Unknown keys are not kept: a key made a moment later must work at once.
        if (caller && generation === this.generation) this.keep(keyHash, caller, now);
        return caller;
      });
      const own = pending;
      const settle = () => {
        if (this.loading.get(keyHash) === own) this.loading.delete(keyHash);
      };
      pending.then(settle, settle);
      this.loading.set(keyHash, pending);
    }
    return pending;
  }

  /** Forgets a key (revoked or changed here), so the next request reads it from the store. */
  forget(apiKeyId: string): void {
    this.generation++;
    // A request after this must not join a lookup that may have read the key before the change.
    this.loading.clear();
    for (const [hash, entry] of this.entries) {
      if (entry.caller?.apiKey.id === apiKeyId) this.entries.delete(hash);
    }
  }

  private keep(keyHash: string, caller: Caller, now: number): void {
    // Entries stay in the order they expire (a refreshed key moves to the end), so the expired ones
    // are at the front: eviction stops at the first live entry instead of walking them all.
    this.entries.delete(keyHash);
    if (this.entries.size >= MAX_ENTRIES) {
      for (const [hash, entry] of this.entries) {
        if (entry.expires > now) break;
        this.entries.delete(hash);
      }
      if (this.entries.size >= 2 * MAX_ENTRIES) this.entries.clear();
    }
    this.entries.set(keyHash, { caller, expires: now + this.ttlMs });
  }
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
