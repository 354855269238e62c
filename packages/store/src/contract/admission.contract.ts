import { describe, expect, it } from "vitest";
import { addKey, at, makeTenant, newRun, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const HOUR = 3_600_000;

export function admissionContract(makeStore: StoreFactory): void {
  describe("admission", () => {
    it("queues a run, reserves its price and takes a slot of the key and the organization", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000, maxConcurrency: 3 });
      const run = newRun(tenant, { unitPrice: 100_000, seconds: 5 });
      const result = await store.admitRun({ run, now: run.createdAt });
      expect(result).toMatchObject({ kind: "admitted", concurrencyRemaining: 2 });
      if (result.kind !== "admitted") return;
      expect(result.run).toMatchObject({
        id: run.id,
        status: "queued",
        reserved: 500_000,
        charged: null,
        output: null,
        error: null,
      });
      const org = await store.getOrganization(tenant.organizationId);
      expect(org).toMatchObject({ balance: 10_000_000, reserved: 500_000, inFlight: 1 });
      expect((await store.getApiKey(tenant.apiKeyId))?.inFlight).toBe(1);
      expect(await store.getRun(tenant.organizationId, run.id)).toMatchObject({
        id: run.id,
        status: "queued",
      });
    });

    it("refuses at the key's cap, then at the organization's, then for balance", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 1_000_000, maxConcurrency: 1 });
      expect((await store.admitRun({ run: newRun(tenant, { seconds: 1 }), now: at(1) })).kind).toBe(
        "admitted",
      );
      const keyFull = await store.admitRun({ run: newRun(tenant, { seconds: 1 }), now: at(2) });
      expect(keyFull).toEqual({
        kind: "rejected",
        decision: { ok: false, reason: "api_key", limit: 1, inFlight: 1 },
      });

      await store.updateApiKey(tenant.apiKeyId, { maxConcurrency: 100 });
      for (let i = 0; i < 9; i++)
        await store.admitRun({ run: newRun(tenant, { unitPrice: 1, seconds: 1 }), now: at(3) });
      const orgFull = await store.admitRun({ run: newRun(tenant, { unitPrice: 1, seconds: 1 }), now: at(4) });
      expect(orgFull).toEqual({
        kind: "rejected",
        decision: { ok: false, reason: "organization", limit: 10, inFlight: 10 },
      });

      const poor = await makeTenant(store, { balance: 499_999 });
      const broke = await store.admitRun({
        run: newRun(poor, { unitPrice: 100_000, seconds: 5 }),
        now: at(5),
      });
      expect(broke).toEqual({
        kind: "rejected",
        decision: { ok: false, reason: "balance", required: 500_000, available: 499_999 },
      });
      expect(await store.getOrganization(poor.organizationId)).toMatchObject({ reserved: 0, inFlight: 0 });
    });

    it("admits exactly up to the cap when submits race", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 5 });
      const results = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.admitRun({ run: newRun(tenant, { seconds: 1 }), now: at(i) }),
        ),
      );
      expect(results.filter((r) => r.kind === "admitted")).toHaveLength(5);
      expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
        inFlight: 5,
        reserved: 500_000,
      });
    });

    it("never reserves more than the wallet holds when submits race", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 1_250_000, maxConcurrency: 50 });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.admitRun({ run: newRun(tenant, { unitPrice: 100_000, seconds: 5 }), now: at(i) }),
        ),
      );
      expect(results.filter((r) => r.kind === "admitted")).toHaveLength(2);
      const org = await store.getOrganization(tenant.organizationId);
      expect(org && org.balance - org.reserved).toBe(250_000);
    });

    it("admits racing submits of several organizations and keys, each against its own caps and wallet", async () => {
      const store = await makeStore();
      const a1 = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 2 });
      const a2 = await addKey(store, a1.organizationId, { maxConcurrency: 3 });
      const b1 = await makeTenant(store, { balance: 300_000, maxConcurrency: 4 });
      const order = [a1, b1, a2, a1, b1, a2, a2, b1, a1, a2, b1, a1, b1];
      const results = await Promise.all(
        order.map((tenant, i) => store.admitRun({ run: newRun(tenant, { seconds: 1 }), now: at(i) })),
      );
      const tally = (tenant: Tenant) =>
        results
          .filter((_, i) => order[i] === tenant)
          .map((r) => (r.kind === "rejected" ? r.decision.reason : r.kind))
          .sort();
      expect(tally(a1)).toEqual(["admitted", "admitted", "api_key", "api_key"]);
      expect(tally(a2)).toEqual(["admitted", "admitted", "admitted", "api_key"]);
      expect(tally(b1)).toEqual(["admitted", "admitted", "admitted", "balance", "balance"]);
      expect(await store.getOrganization(a1.organizationId)).toMatchObject({
        inFlight: 5,
        reserved: 500_000,
      });
      expect(await store.getOrganization(b1.organizationId)).toMatchObject({
        inFlight: 3,
        reserved: 300_000,
      });
      expect((await store.getApiKey(a1.apiKeyId))?.inFlight).toBe(2);
      expect((await store.getApiKey(a2.apiKeyId))?.inFlight).toBe(3);
      for (const r of results) {
        if (r.kind === "admitted") expect(await store.getRun(r.run.organizationId, r.run.id)).toEqual(r.run);
      }
    });

    it("refuses a revoked key", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 1_000_000 });
      await store.revokeApiKey(tenant.apiKeyId, at(0));
      expect((await store.admitRun({ run: newRun(tenant), now: at(1) })).kind).toBe("api_key_gone");
    });

    describe("idempotency", () => {
      it("stores an async submit's response in the admission itself, so a retry always replays it", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const run = newRun(tenant);
        const idem = {
          key: "k1",
          requestHash: "h1",
          expiresAt: at(24 * HOUR),
          response: { status: 201, body: { run_id: run.id, status: "queued" } },
        };
        const first = await store.admitRun({ run, idempotency: idem, now: at(1) });
        if (first.kind !== "admitted") throw new Error(first.kind);
        // No completeIdempotency call: the process that admitted the run may have died right here.
        const replay = await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(2) });
        expect(replay).toEqual({
          kind: "idempotency",
          decision: {
            kind: "replay",
            runId: first.run.id,
            status: 201,
            body: { run_id: first.run.id, status: "queued" },
          },
        });
        expect((await store.getOrganization(tenant.organizationId))?.inFlight).toBe(1);
      });

      it("keeps a sync submit's key pending on its run until completed, then replays the stored response", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const idem = { key: "k1", requestHash: "h1", expiresAt: at(24 * HOUR) };
        const first = await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(1) });
        if (first.kind !== "admitted") throw new Error(first.kind);
        expect(await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(2) })).toEqual({
          kind: "idempotency",
          decision: { kind: "pending", runId: first.run.id },
        });
        await store.completeIdempotency(tenant.organizationId, "k1", { status: 201, body: { run_id: "x" } });
        // Only the first completion counts.
        await store.completeIdempotency(tenant.organizationId, "k1", { status: 201, body: { run_id: "y" } });
        const replay = await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(3) });
        expect(replay).toMatchObject({
          kind: "idempotency",
          decision: { kind: "replay", status: 201, body: { run_id: "x" } },
        });
        expect((await store.getOrganization(tenant.organizationId))?.inFlight).toBe(1);
      });

      it("says whether a key is held, by its organization, until it expires", async () => {
        const store = await makeStore();
        const a = await makeTenant(store, { balance: 10_000_000 });
        const b = await makeTenant(store, { balance: 10_000_000 });
        expect(await store.hasIdempotencyKey(a.organizationId, "k", at(1))).toBe(false);
        await store.admitRun({
          run: newRun(a),
          idempotency: { key: "k", requestHash: "h1", expiresAt: at(HOUR) },
          now: at(1),
        });
        expect(await store.hasIdempotencyKey(a.organizationId, "k", at(2))).toBe(true);
        expect(await store.hasIdempotencyKey(b.organizationId, "k", at(2))).toBe(false);
        expect(await store.hasIdempotencyKey(a.organizationId, "k", at(HOUR))).toBe(false);
      });

      it("refuses the same key with another body, and scopes keys to the organization", async () => {
        const store = await makeStore();
        const a = await makeTenant(store, { balance: 10_000_000 });
        const b = await makeTenant(store, { balance: 10_000_000 });
        await store.admitRun({
          run: newRun(a),
          idempotency: { key: "k", requestHash: "h1", expiresAt: at(HOUR) },
          now: at(1),
        });
        const other = await store.admitRun({
          run: newRun(a),
          idempotency: { key: "k", requestHash: "h2", expiresAt: at(HOUR) },
          now: at(2),
        });
        expect(other).toEqual({ kind: "idempotency", decision: { kind: "mismatch" } });
        const elsewhere = await store.admitRun({
          run: newRun(b),
          idempotency: { key: "k", requestHash: "h2", expiresAt: at(HOUR) },
          now: at(3),
        });
        expect(elsewhere.kind).toBe("admitted");
      });

      it("creates one run when the same key races", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        const idem = { key: "race", requestHash: "h", expiresAt: at(HOUR) };
        const results = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(i) }),
          ),
        );
        const admitted = results.filter((r) => r.kind === "admitted");
        expect(admitted).toHaveLength(1);
        expect(results.filter((r) => r.kind === "idempotency")).toEqual(
          Array.from({ length: 9 }, () => ({
            kind: "idempotency",
            decision: { kind: "pending", runId: admitted[0]?.run.id },
          })),
        );
      });

      it("forgets a key once it expires", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 10_000_000 });
        await store.admitRun({
          run: newRun(tenant),
          idempotency: { key: "k", requestHash: "h", expiresAt: at(HOUR) },
          now: at(1),
        });
        const later = await store.admitRun({
          run: newRun(tenant),
          idempotency: { key: "k", requestHash: "h2", expiresAt: at(3 * HOUR) },
          now: at(2 * HOUR),
        });
        expect(later.kind).toBe("admitted");
      });

      it("records nothing for a rejected submit, so a retry may still succeed", async () => {
        const store = await makeStore();
        const tenant = await makeTenant(store, { balance: 100_000 });
        const idem = { key: "k", requestHash: "h", expiresAt: at(HOUR) };
        expect((await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(1) })).kind).toBe(
          "rejected",
        );
        await store.addTopUp({
          id: "t",
          organizationId: tenant.organizationId,
          amount: 10_000_000,
          note: null,
          now: at(2),
        });
        expect((await store.admitRun({ run: newRun(tenant), idempotency: idem, now: at(3) })).kind).toBe(
          "admitted",
        );
      });
    });
  });
}
