import { MAX_LIFETIME_TOP_UPS, MAX_TOP_UP } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { at, makeTenant, T0 } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

export function accountsContract(makeStore: StoreFactory): void {
  describe("organizations, keys and rate windows", () => {
    it("creates an organization on the starter tier with an empty wallet", async () => {
      const store = await makeStore();
      const org = await store.createOrganization({
        id: "org_a",
        name: "A",
        webhookSecrets: { live: "whsec_x", test: "whsec_y" },
        now: T0,
      });
      expect(org).toMatchObject({
        id: "org_a",
        name: "A",
        balance: 0,
        reserved: 0,
        tier: "starter",
        concurrencyLimit: 10,
        inFlight: 0,
        webhookSecrets: {
          live: { secret: "whsec_x", previous: null },
          test: { secret: "whsec_y", previous: null },
        },
      });
      expect(await store.getOrganization("org_a")).toEqual(org);
      expect(await store.getOrganization("org_missing")).toBeNull();
    });

    it.each([
      ["100.00", 100_000_000, "starter", 10],
      ["350.00", 350_000_000, "growth", 25],
      ["1400.00", 1_400_000_000, "pro", 50],
      ["7000.00", 7_000_000_000, "scale", 100],
    ])("moves up the tiers with lifetime top-ups (%s USD)", async (_label, amount, tier, limit) => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const result = await store.addTopUp({
        id: "top_1",
        organizationId: tenant.organizationId,
        amount,
        note: "n",
        now: T0,
      });
      if (result?.kind !== "added") throw new Error(`not added: ${JSON.stringify(result)}`);
      expect(result.organization).toMatchObject({
        balance: amount,
        lifetimeTopUps: amount,
        tier,
        concurrencyLimit: limit,
      });
      expect(result.topUp).toMatchObject({ amount, note: "n" });
    });

    it("refuses a top-up past the lifetime cap under the organization's lock, also when top-ups race", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const nearCap = MAX_LIFETIME_TOP_UPS - 3 * MAX_TOP_UP;
      // Reach near the cap in top-ups of at most MAX_TOP_UP.
      for (let added = 0, i = 0; added < nearCap; i++) {
        const amount = Math.min(MAX_TOP_UP, nearCap - added);
        const result = await store.addTopUp({
          id: `fill_${i}`,
          organizationId: tenant.organizationId,
          amount,
          note: null,
          now: T0,
        });
        expect(result?.kind).toBe("added");
        added += amount;
      }
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          store.addTopUp({
            id: `race_${i}`,
            organizationId: tenant.organizationId,
            amount: MAX_TOP_UP,
            note: null,
            now: T0,
          }),
        ),
      );
      expect(results.filter((r) => r?.kind === "added")).toHaveLength(3);
      for (const refused of results.filter((r) => r?.kind === "rejected")) {
        expect(refused).toEqual({
          kind: "rejected",
          decision: {
            ok: false,
            reason: "lifetime_cap",
            lifetimeTopUps: MAX_LIFETIME_TOP_UPS,
            max: MAX_LIFETIME_TOP_UPS,
          },
        });
      }
      const org = await store.getOrganization(tenant.organizationId);
      expect(org?.lifetimeTopUps).toBe(MAX_LIFETIME_TOP_UPS);
      expect(Number.isSafeInteger((org?.balance ?? 0) + (org?.reserved ?? 0))).toBe(true);
    });

    it("refuses a top-up or key for an unknown organization", async () => {
      const store = await makeStore();
      expect(
        await store.addTopUp({ id: "t", organizationId: "org_nope", amount: 1, note: null, now: T0 }),
      ).toBeNull();
      const key = {
        id: "k",
        organizationId: "org_nope",
        name: null,
        environment: "live",
        keyHash: "h",
        keyPrefix: "p",
        maxConcurrency: 1,
        rateLimitPerMinute: 1,
        now: T0,
      } as const;
      expect(await store.createApiKey(key)).toBeNull();
    });

    it("finds a key by hash, updates and revokes it", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const found = await store.findApiKeyByHash(tenant.keyHash);
      expect(found?.apiKey.id).toBe(tenant.apiKeyId);
      expect(found?.organization.id).toBe(tenant.organizationId);
      expect(await store.findApiKeyByHash("0".repeat(64))).toBeNull();

      const updated = await store.updateApiKey(tenant.apiKeyId, { maxConcurrency: 3, rateLimitPerMinute: 7 });
      expect(updated).toMatchObject({ maxConcurrency: 3, rateLimitPerMinute: 7, name: "live" });
      const revoked = await store.revokeApiKey(tenant.apiKeyId, at(1000));
      expect(revoked?.revokedAt).toEqual(at(1000));
      // Revoking again keeps the first time.
      expect((await store.revokeApiKey(tenant.apiKeyId, at(5000)))?.revokedAt).toEqual(at(1000));
      expect((await store.findApiKeyByHash(tenant.keyHash))?.apiKey.revokedAt).toEqual(at(1000));
      expect(await store.updateApiKey("key_missing", { name: "x" })).toBeNull();
    });

    it("counts requests in per-key windows of a minute", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const other = await makeTenant(store);
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push((await store.countRequest(tenant.apiKeyId, 3, at(i))).allowed);
      expect(seen).toEqual([true, true, true, false]);
      expect((await store.countRequest(other.apiKeyId, 3, at(10))).allowed).toBe(true);
      const reset = await store.countRequest(tenant.apiKeyId, 3, at(60_000));
      expect(reset).toMatchObject({ allowed: true, remaining: 2, limit: 3 });
    });

    it("counts parallel requests exactly", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const decisions = await Promise.all(
        Array.from({ length: 40 }, () => store.countRequest(tenant.apiKeyId, 25, at(5))),
      );
      expect(decisions.filter((d) => d.allowed)).toHaveLength(25);
      expect(decisions.map((d) => d.remaining).sort((a, b) => b - a)).toEqual([
        ...Array.from({ length: 25 }, (_, i) => 24 - i),
        ...Array.from({ length: 15 }, () => 0),
      ]);
    });

    it("counts parallel requests of several keys each in its own window, a new window included", async () => {
      const store = await makeStore();
      const a = await makeTenant(store);
      const b = await makeTenant(store);
      // b's window started a minute ago and ends now: its requests open a new one.
      await store.countRequest(b.apiKeyId, 2, at(0));
      await store.countRequest(b.apiKeyId, 2, at(0));
      const asked = [a, b, a, b, a, a, b, a].map((t) => ({
        t,
        decision: store.countRequest(t.apiKeyId, t === a ? 3 : 2, at(60_000)),
      }));
      const decided = await Promise.all(asked.map(async ({ t, decision }) => ({ t, d: await decision })));
      // Which of a key's parallel requests gets which place is the store's to choose.
      const of = (t: typeof a) =>
        decided
          .filter((x) => x.t === t)
          .map(({ d }) => [d.allowed, d.remaining, d.resetMs])
          .sort((x, y) => Number(y[1]) - Number(x[1]) || Number(y[0]) - Number(x[0]));
      expect(of(a)).toEqual([
        [true, 2, 60_000],
        [true, 1, 60_000],
        [true, 0, 60_000],
        [false, 0, 60_000],
        [false, 0, 60_000],
      ]);
      expect(of(b)).toEqual([
        [true, 1, 60_000],
        [true, 0, 60_000],
        [false, 0, 60_000],
      ]);
    });
  });
}
