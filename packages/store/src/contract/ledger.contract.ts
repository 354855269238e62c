import { describe, expect, it } from "vitest";
import type { Store } from "../types.js";
import { addKey, at, failed, makeTenant, newRun, succeeded, T0 } from "./fixtures.js";
import type { StoreFactory } from "./index.js";
import { checkLedger } from "./invariants.contract.js";

const actor = { name: "ops-alice", requestId: "req_contract" };

async function org(store: Store, id: string) {
  const found = await store.getOrganization(id);
  if (!found) throw new Error(`no organization ${id}`);
  return found;
}

export function ledgerContract(makeStore: StoreFactory): void {
  describe("the ledger", () => {
    it("writes every change of the wallet as an entry that adds up to it", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 10_000_000 });
      const test = await addKey(store, live.organizationId, { environment: "test" });
      const a = newRun(live, { seconds: 5, createdAt: at(1) });
      const b = newRun(live, { seconds: 3, createdAt: at(2) });
      const t = newRun(test, { seconds: 4, createdAt: at(3) });
      for (const run of [a, b, t]) {
        expect((await store.admitRun({ run, now: run.createdAt })).kind).toBe("admitted");
      }
      await store.completeRun({ runId: a.id, outcome: succeeded(400_000, 4), now: at(100) });
      await store.completeRun({ runId: t.id, outcome: succeeded(400_000, 4), now: at(101) });
      await store.completeRun({ runId: b.id, outcome: failed, now: at(102) });

      const entries = await store.listLedger({ organizationId: live.organizationId, limit: 100 });
      // Newest first; the test run moved no money.
      expect(entries.map((e) => [e.kind, e.amount, e.runId])).toEqual([
        ["release", -300_000, b.id],
        ["release", -500_000, a.id],
        ["charge", -400_000, a.id],
        ["reservation", 300_000, b.id],
        ["reservation", 500_000, a.id],
        ["top_up", 10_000_000, null],
      ]);
      expect(entries[2]).toMatchObject({ balance: 9_600_000, reserved: 800_000, apiKeyId: live.apiKeyId });
      await checkLedger(store, await org(store, live.organizationId));
      await store.close();
    });

    it("filters by kind, key, run and time, and pages by keyset", async () => {
      const store = await makeStore();
      const first = await makeTenant(store, { balance: 10_000_000 });
      const second = await addKey(store, first.organizationId);
      const other = await makeTenant(store, { balance: 1_000_000 });
      const runs = [1, 2, 3].map((n) => newRun(n === 2 ? second : first, { createdAt: at(n) }));
      for (const run of runs) await store.admitRun({ run, now: run.createdAt });
      const search = { organizationId: first.organizationId, limit: 100 };

      const byKind = await store.listLedger({ ...search, kinds: ["reservation"] });
      expect(byKind.map((e) => e.runId)).toEqual([runs[2]?.id, runs[1]?.id, runs[0]?.id]);
      const byKey = await store.listLedger({ ...search, apiKeyId: second.apiKeyId });
      expect(byKey.map((e) => e.runId)).toEqual([runs[1]?.id]);
      const byRun = await store.listLedger({ ...search, runId: runs[0]?.id as string });
      expect(byRun).toHaveLength(1);
      const from = runs[1]?.createdAt as Date;
      const windowed = await store.listLedger({ ...search, from, to: runs[2]?.createdAt as Date });
      expect(windowed.map((e) => e.runId)).toEqual([runs[1]?.id]);

      const page1 = await store.listLedger({ ...search, limit: 2 });
      const last = page1[1] as { createdAt: Date; id: string };
      const page2 = await store.listLedger({ ...search, limit: 2, after: last });
      expect([...page1, ...page2].map((e) => e.id)).toEqual(
        (await store.listLedger(search)).map((e) => e.id),
      );
      // Every organization's, for the operator: the other's top-up is there too.
      const all = await store.listLedger({ limit: 100_000 });
      expect(all.some((e) => e.organizationId === other.organizationId)).toBe(true);
      await store.close();
    });

    it("applies a top-up with an Idempotency-Key once, and refuses the key for another top-up", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const topUp = {
        id: "top_first",
        organizationId: tenant.organizationId,
        amount: 2_000_000,
        note: "invoice 17",
        now: T0,
        idempotencyKey: "topup-17",
        actor,
      };
      const first = await store.addTopUp(topUp);
      expect(first?.kind).toBe("added");
      const again = await store.addTopUp({ ...topUp, id: "top_second", now: at(10) });
      expect(again).toMatchObject({ kind: "replayed", topUp: { id: "top_first" } });
      expect(again?.kind === "replayed" && again.organization.balance).toBe(2_000_000);
      const other = await store.addTopUp({ ...topUp, id: "top_third", amount: 3_000_000 });
      expect(other).toMatchObject({ kind: "mismatch", topUp: { id: "top_first", amount: 2_000_000 } });
      expect((await org(store, tenant.organizationId)).balance).toBe(2_000_000);
      const entries = await store.listLedger({ organizationId: tenant.organizationId, limit: 10 });
      expect(entries.map((e) => [e.kind, e.topUpId, e.actor])).toEqual([
        ["top_up", "top_first", "ops-alice"],
      ]);
      const audit = await store.listAudit({ organizationId: tenant.organizationId, limit: 10 });
      expect(audit.map((e) => [e.action, e.actor, e.targetId, e.requestId])).toEqual([
        ["top_up.create", "ops-alice", "top_first", "req_contract"],
      ]);
      await store.close();
    });

    it("reverses a top-up once, lowering the tier, never below what runs in flight hold", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store);
      const orgId = tenant.organizationId;
      await store.addTopUp({
        id: "top_small",
        organizationId: orgId,
        amount: 5_000_000,
        note: null,
        now: T0,
      });
      await store.addTopUp({
        id: "top_big",
        organizationId: orgId,
        amount: 400_000_000,
        note: null,
        now: T0,
      });
      expect((await org(store, orgId)).tier).toBe("growth");
      const run = newRun(tenant, { unitPrice: 1_000_000, seconds: 2, createdAt: at(1) });
      await store.admitRun({ run, now: run.createdAt });

      const reverse = (topUpId: string, now = at(50)) =>
        store.reverseTopUp({ organizationId: orgId, topUpId, reason: "sent twice", actor, now });
      const made = await reverse("top_big");
      expect(made).toMatchObject({
        kind: "made",
        entry: { kind: "reversal", amount: -400_000_000, topUpId: "top_big", reason: "sent twice" },
        organization: { balance: 5_000_000, lifetimeTopUps: 5_000_000, tier: "starter" },
      });
      expect(await reverse("top_big")).toMatchObject({
        kind: "rejected",
        decision: { reason: "already_reversed" },
      });
      // 5 USD left and 2 USD held by the run: taking the small top-up back would go below what is held.
      expect(await reverse("top_small")).toEqual({
        kind: "rejected",
        decision: { ok: false, reason: "below_available", amount: -5_000_000, available: 3_000_000 },
      });
      expect(await reverse("top_missing")).toBeNull();
      const other = await makeTenant(store, { balance: 1_000_000 });
      expect(
        await store.reverseTopUp({
          organizationId: other.organizationId,
          topUpId: "top_small",
          reason: "x",
          actor,
          now: T0,
        }),
      ).toBeNull();
      const listed = await store.listTopUps({ organizationId: orgId, limit: 10 });
      expect(listed.map((t) => [t.id, t.reversedAt])).toEqual([
        ["top_small", null],
        ["top_big", at(50)],
      ]);
      expect((await store.listAudit({ organizationId: orgId, limit: 10 })).map((e) => e.action)).toEqual([
        "top_up.reverse",
      ]);
      await checkLedger(store, await org(store, orgId));
      await store.close();
    });

    it("adjusts the balance either way with a reason, never below what is held", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 5_000_000 });
      const orgId = tenant.organizationId;
      const run = newRun(tenant, { unitPrice: 1_000_000, seconds: 2, createdAt: at(1) });
      await store.admitRun({ run, now: run.createdAt });
      const adjust = (amount: number) =>
        store.adjustBalance({
          organizationId: orgId,
          amount,
          reason: "credit for an outage",
          actor,
          now: at(60),
        });
      expect(await adjust(250_000)).toMatchObject({
        kind: "made",
        entry: {
          kind: "adjustment",
          amount: 250_000,
          balance: 5_250_000,
          reserved: 2_000_000,
          actor: "ops-alice",
        },
      });
      expect(await adjust(-3_250_001)).toMatchObject({
        kind: "rejected",
        decision: { available: 3_250_000 },
      });
      expect(await adjust(-3_250_000)).toMatchObject({ kind: "made", organization: { balance: 2_000_000 } });
      expect(
        await store.adjustBalance({ organizationId: "org_none", amount: 1, reason: "x", actor, now: T0 }),
      ).toBeNull();
      const audit = await store.listAudit({ limit: 10, actor: "ops-alice", organizationId: orgId });
      expect(audit.map((e) => [e.action, e.detail.amount])).toEqual([
        ["balance.adjust", -3_250_000],
        ["balance.adjust", 250_000],
      ]);
      await checkLedger(store, await org(store, orgId));
      await store.close();
    });
  });

  describe("per-key budgets", () => {
    it("refuses a run past the key's budget, holding and releasing prices like the wallet", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, {
        balance: 100_000_000,
        budget: { amount: 1_000_000, period: "day" },
      });
      const admit = (seconds: number) => {
        const run = newRun(tenant, { seconds });
        return store.admitRun({ run, now: run.createdAt }).then((result) => ({ run, result }));
      };
      const first = await admit(6); // holds 0.60 USD
      expect(first.result.kind).toBe("admitted");
      const refused = await admit(5); // 0.60 + 0.50 > 1.00
      expect(refused.result).toMatchObject({
        kind: "rejected",
        decision: { reason: "budget", required: 500_000, spent: 0, reserved: 600_000, remaining: 400_000 },
      });
      // The first run fails: its hold is released, and 0.50 fits again.
      await store.completeRun({ runId: first.run.id, outcome: failed, now: at(100) });
      const second = await admit(5);
      expect(second.result.kind).toBe("admitted");
      await store.completeRun({ runId: second.run.id, outcome: succeeded(400_000, 4), now: at(200) });
      const key = await store.getApiKey(tenant.apiKeyId);
      expect(key?.spend.reserved).toBe(0);
      expect(key?.spend.day).toEqual({ start: new Date("2026-11-22T00:00:00Z"), spent: 400_000 });
      expect((await admit(7)).result.kind).toBe("rejected");
      expect((await admit(6)).result.kind).toBe("admitted");
      await store.close();
    });

    it("starts each period afresh, and counts a test key's priced runs", async () => {
      const store = await makeStore();
      const owner = await makeTenant(store);
      const test = await addKey(store, owner.organizationId, {
        environment: "test",
        budget: { amount: 500_000, period: "day" },
      });
      const run = newRun(test, { seconds: 5 });
      expect((await store.admitRun({ run, now: run.createdAt })).kind).toBe("admitted");
      await store.completeRun({ runId: run.id, outcome: succeeded(500_000), now: at(10) });
      const sameDay = newRun(test, { seconds: 1, createdAt: at(20) });
      expect((await store.admitRun({ run: sameDay, now: at(20) })).kind).toBe("rejected");
      const tomorrow = new Date("2026-11-23T00:00:00Z");
      const nextDay = newRun(test, { seconds: 5, createdAt: tomorrow });
      expect((await store.admitRun({ run: nextDay, now: tomorrow })).kind).toBe("admitted");
      await store.close();
    });

    it("takes a budget set, changed or removed on a key at once, counting what it spent this period", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000 });
      const run = newRun(tenant, { seconds: 5 });
      await store.admitRun({ run, now: run.createdAt });
      await store.completeRun({ runId: run.id, outcome: succeeded(500_000), now: at(10) });
      const monthly = { amount: 800_000, period: "month" as const };
      expect((await store.updateApiKey(tenant.apiKeyId, { budget: monthly }))?.budget).toEqual(monthly);
      const next = newRun(tenant, { seconds: 4, createdAt: at(20) });
      expect(await store.admitRun({ run: next, now: at(20) })).toMatchObject({
        kind: "rejected",
        decision: { reason: "budget", spent: 500_000, resetsAt: new Date("2026-12-01T00:00:00Z") },
      });
      expect((await store.updateApiKey(tenant.apiKeyId, { name: "renamed" }))?.budget).toEqual(monthly);
      expect((await store.updateApiKey(tenant.apiKeyId, { budget: null }))?.budget).toBeNull();
      expect((await store.admitRun({ run: next, now: at(20) })).kind).toBe("admitted");
      await store.close();
    });
  });
}
