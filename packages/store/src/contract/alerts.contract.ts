import { describe, expect, it } from "vitest";
import type { Store } from "../types.js";
import { at, makeTenant, newRun, succeeded, T0 } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

const URL = "https://alerts.example.com/hook";

/** The organization's alert deliveries of an environment, oldest first, with their bodies. */
async function alertsOf(store: Store, organizationId: string, environment: "live" | "test" = "live") {
  const found = await store.searchWebhookDeliveries({ organizationId, environment, limit: 100 });
  return found
    .filter((d) => d.runId === null)
    .reverse()
    .map((d) => ({ type: d.eventType, url: d.url, body: JSON.parse(d.payload ?? "null") }));
}

export function alertsContract(makeStore: StoreFactory): void {
  describe("spend alerts", () => {
    it("warns once as the wallet falls below 20 % and 5 % of the last top-up, again after a top-up", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const org = tenant.organizationId;
      await store.updateOrganization(org, { alertWebhookUrl: URL });
      const admit = async (unitPrice: number, n: number) => {
        const run = newRun(tenant, { unitPrice, seconds: 1, createdAt: at(n) });
        expect((await store.admitRun({ run, now: at(n) })).kind).toBe("admitted");
        return run;
      };
      const first = await admit(7_000_000, 1); // 3.00 left: above 2.00
      expect(await alertsOf(store, org)).toEqual([]);
      await admit(1_500_000, 2); // 1.50 left: below 20 %
      await admit(100_000, 3); // still below: no second warning
      const warned = await alertsOf(store, org);
      expect(warned).toEqual([
        {
          type: "account.balance_low",
          url: URL,
          body: {
            type: "account.balance_low",
            timestamp: at(2).toISOString(),
            data: {
              organization_id: org,
              environment: "live",
              available_usd: "1.50",
              threshold_usd: "2.00",
              threshold: { percent_of_last_top_up: 20 },
            },
          },
        },
      ]);
      // The first run ends: its release lifts the balance above 2.00, but only money in arms it.
      await store.completeRun({ runId: first.id, outcome: succeeded(1_000_000, 1), now: at(4) });
      await admit(6_950_000, 5); // 7.40 after the end, 0.45 now: below 5 % (0.50)
      expect((await alertsOf(store, org)).map((a) => a.body.data.threshold_usd)).toEqual(["2.00", "0.50"]);
      // A top-up of 10.00: thresholds are now 2.00 and 0.50 of it again, armed, and fire again.
      await store.addTopUp({
        id: "top_again",
        organizationId: org,
        amount: 10_000_000,
        note: null,
        now: at(7),
      });
      await admit(9_000_000, 8);
      expect((await alertsOf(store, org)).map((a) => a.body.data.threshold_usd)).toEqual([
        "2.00",
        "0.50",
        "2.00",
      ]);
      await store.close();
    });

    it("warns at fixed amounts, on a negative adjustment too, and never without a URL", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const org = tenant.organizationId;
      await store.updateOrganization(org, { balanceAlertThresholds: [{ amount: 5_000_000 }] });
      const actor = { name: "ops", requestId: "req_1" };
      await store.adjustBalance({ organizationId: org, amount: -6_000_000, reason: "x", actor, now: at(1) });
      expect(await alertsOf(store, org)).toEqual([]);
      await store.adjustBalance({ organizationId: org, amount: 6_000_000, reason: "x", actor, now: at(2) });
      await store.updateOrganization(org, { alertWebhookUrl: URL });
      await store.adjustBalance({ organizationId: org, amount: -6_000_000, reason: "x", actor, now: at(3) });
      const alerts = await alertsOf(store, org);
      expect(alerts.map((a) => a.body.data)).toEqual([
        {
          organization_id: org,
          environment: "live",
          available_usd: "4.00",
          threshold_usd: "5.00",
          threshold: { amount_usd: "5.00" },
        },
      ]);
      const [claimed] = await store.claimWebhookDeliveries({ now: at(4), limit: 10, leaseMs: 1000 });
      expect(claimed).toMatchObject({ runId: null, eventType: "account.balance_low", url: URL });
      expect(JSON.parse(claimed?.payload ?? "{}").data.threshold_usd).toBe("5.00");
      await store.close();
    });

    it("tells a key's budget at 80 % and when it is used up or refuses a run, once a period", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, {
        balance: 100_000_000,
        environment: "test",
        budget: { amount: 1_000_000, period: "day" },
      });
      await store.updateOrganization(tenant.organizationId, { alertWebhookUrl: URL });
      const admit = (seconds: number, n: number) =>
        store.admitRun({ run: newRun(tenant, { seconds, createdAt: at(n) }), now: at(n) });
      expect((await admit(7, 1)).kind).toBe("admitted"); // 0.70: below 80 %
      expect(await alertsOf(store, tenant.organizationId, "test")).toEqual([]);
      expect((await admit(1, 2)).kind).toBe("admitted"); // 0.80: 80 %
      expect((await admit(1, 3)).kind).toBe("admitted"); // 0.90: still one warning
      expect((await admit(2, 4)).kind).toBe("rejected"); // 1.10 would pass it: used up
      expect((await admit(2, 5)).kind).toBe("rejected"); // once only
      const alerts = await alertsOf(store, tenant.organizationId, "test");
      expect(alerts.map((a) => [a.type, a.body.data.percent, a.body.data.budget.spent_usd])).toEqual([
        ["key.budget_threshold", 80, "0.00"],
        ["key.budget_exhausted", 100, "0.00"],
      ]);
      expect(alerts[1]?.body.data).toMatchObject({
        api_key_id: tenant.apiKeyId,
        environment: "test",
        budget: { amount_usd: "1.00", period: "day", reserved_usd: "0.90", remaining_usd: "0.10" },
      });
      // The next day starts afresh.
      const tomorrow = new Date(T0.getTime() + 86_400_000);
      await store.updateApiKey(tenant.apiKeyId, { budget: { amount: 2_000_000, period: "day" } });
      const run = newRun(tenant, { seconds: 9, createdAt: tomorrow });
      expect((await store.admitRun({ run, now: tomorrow })).kind).toBe("admitted"); // 0.90 + 0.90 held of 2.00
      expect((await alertsOf(store, tenant.organizationId, "test")).map((a) => a.type)).toEqual([
        "key.budget_threshold",
        "key.budget_exhausted",
        "key.budget_threshold",
      ]);
      await store.close();
    });
  });
}
