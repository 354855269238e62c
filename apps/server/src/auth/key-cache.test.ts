import { createHash } from "node:crypto";
import { MemoryStore } from "@refvid/store";
import { describe, expect, it } from "vitest";
import { ManualClock } from "../manual-clock.js";
import { KeyCache } from "./key-cache.js";

const T0 = new Date("2026-06-01T00:00:00Z");
const hashOf = (secret: string) => createHash("sha256").update(secret).digest("hex");

/** A store with one organization and one key, counting the key lookups that reach it. */
async function setUp() {
  const store = new MemoryStore();
  await store.createOrganization({
    id: "org_1",
    name: "acme",
    webhookSecrets: { live: "whsec_eA==", test: "whsec_eQ==" },
    now: T0,
  });
  await store.createApiKey({
    id: "key_1",
    organizationId: "org_1",
    name: null,
    environment: "live",
    keyHash: hashOf("sk-live-1"),
    keyPrefix: "sk-live-1",
    maxConcurrency: 10,
    rateLimitPerMinute: 120,
    now: T0,
  });
  let lookups = 0;
  const counted = {
    findApiKeyByHash: (hash: string) => {
      lookups++;
      return store.findApiKeyByHash(hash);
    },
  };
  const clock = new ManualClock(T0);
  return { store, clock, keys: new KeyCache(counted, clock), lookups: () => lookups };
}

describe("KeyCache", () => {
  it("reads a key from the store once per 900 ms, and hands out a frozen copy", async () => {
    const { clock, keys, lookups } = await setUp();
    const first = await keys.find(hashOf("sk-live-1"));
    expect(first?.apiKey.id).toBe("key_1");
    expect(Object.isFrozen(first?.apiKey)).toBe(true);
    await keys.find(hashOf("sk-live-1"));
    await clock.advance(899);
    await keys.find(hashOf("sk-live-1"));
    expect(lookups()).toBe(1);
    await clock.advance(1);
    await keys.find(hashOf("sk-live-1"));
    expect(lookups()).toBe(2);
  });

  it("sees a revocation made elsewhere within 900 ms, and at once once told", async () => {
    const { store, clock, keys } = await setUp();
    await keys.find(hashOf("sk-live-1"));
    await store.revokeApiKey("key_1", T0);
    expect((await keys.find(hashOf("sk-live-1")))?.apiKey.revokedAt).toBeNull();
    await clock.advance(900);
    expect((await keys.find(hashOf("sk-live-1")))?.apiKey.revokedAt).toEqual(T0);

    const other = await setUp();
    await other.keys.find(hashOf("sk-live-1"));
    await other.store.revokeApiKey("key_1", T0);
    other.keys.forget("key_1");
    expect((await other.keys.find(hashOf("sk-live-1")))?.apiKey.revokedAt).toEqual(T0);
  });

  it("shares one lookup between concurrent requests, and never caches an unknown key", async () => {
    const { keys, lookups } = await setUp();
    const found = await Promise.all([1, 2, 3].map(() => keys.find(hashOf("sk-live-1"))));
    expect(new Set(found).size).toBe(1);
    expect(lookups()).toBe(1);
    expect(await keys.find(hashOf("sk-live-unknown"))).toBeNull();
    expect(await keys.find(hashOf("sk-live-unknown"))).toBeNull();
    expect(lookups()).toBe(3);
  });

  it("does not keep what a lookup read when the key was forgotten while it was under way", async () => {
    const { store, keys, lookups } = await setUp();
    const pending = keys.find(hashOf("sk-live-1"));
    await store.revokeApiKey("key_1", T0);
    keys.forget("key_1");
    await pending;
    expect((await keys.find(hashOf("sk-live-1")))?.apiKey.revokedAt).toEqual(T0);
    expect(lookups()).toBe(2);
  });

  it("does not hand a request made after a change the lookup that started before it", async () => {
    const { store, keys, lookups } = await setUp();
    const pending = keys.find(hashOf("sk-live-1"));
    await store.revokeApiKey("key_1", T0);
    keys.forget("key_1");
    const after = await keys.find(hashOf("sk-live-1"));
    expect(after?.apiKey.revokedAt).toEqual(T0);
    expect((await pending)?.apiKey.revokedAt).toBeNull();
    expect(lookups()).toBe(2);
  });

  it("reads a key again when the system clock stepped back past its entry", async () => {
    const { store } = await setUp();
    let now = T0;
    let lookups = 0;
    const keys = new KeyCache(
      {
        findApiKeyByHash: (hash: string) => {
          lookups++;
          return store.findApiKeyByHash(hash);
        },
      },
      { now: () => now } as ManualClock,
    );
    await keys.find(hashOf("sk-live-1"));
    now = new Date(T0.getTime() - 60_000);
    await keys.find(hashOf("sk-live-1"));
    expect(lookups).toBe(2);
  });
});
