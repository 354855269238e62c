import { describe, expect, it } from "vitest";
import type { Store } from "../types.js";
import { addKey, at, attempt, failed, makeTenant, newRun, scopeOf, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** A run of `tenant` with a webhook, ended at `endedAt`; its delivery's id. */
async function endedWithHook(store: Store, tenant: Tenant, endedAt: Date): Promise<string> {
  const run = newRun(tenant, { webhookUrl: "https://example.com/hook", createdAt: at(0) });
  await store.admitRun({ run, now: at(0) });
  await store.completeRun({ runId: run.id, outcome: failed, now: endedAt });
  const [delivery] = await store.listWebhookDeliveries(run.id);
  if (!delivery) throw new Error("no delivery enqueued");
  return delivery.id;
}

/** Claims the due delivery `id` at `now` (fails if it is not due). */
async function claim(store: Store, id: string, now: Date) {
  const claimed = await store.claimWebhookDeliveries({ now, limit: 100, leaseMs: 30_000 });
  const delivery = claimed.find((d) => d.id === id);
  if (!delivery) throw new Error(`${id} was not due at ${now.toISOString()}`);
  return delivery;
}

/** The delivery log and the webhook secret's rotation. */
export function webhookLogContract(makeStore: StoreFactory): void {
  describe("webhook delivery log", () => {
    it("logs every attempt counted, oldest first, with its time, status, error and duration", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const id = await endedWithHook(store, tenant, at(10));
      expect(await store.getWebhookDelivery(tenant.organizationId, id)).toMatchObject({ history: [] });

      await claim(store, id, at(10));
      await store.recordWebhookAttempt(id, {
        ...attempt(at(10), at(95), null),
        ok: false,
        payload: "{}",
        error: "connection failed: refused",
        retryAt: at(1000),
      });
      await claim(store, id, at(1000));
      await store.recordWebhookAttempt(id, {
        ...attempt(at(1000), at(1250), 503),
        ok: false,
        payload: "{}",
        error: "HTTP 503",
        retryAt: at(2000),
      });
      await claim(store, id, at(2000));
      await store.recordWebhookAttempt(id, { ...attempt(at(2000), at(2040), 204), ok: true, payload: "{}" });
      // A late report from a dispatcher whose lease ran out: the delivery has ended, nothing is logged.
      await store.recordWebhookAttempt(id, { ...attempt(at(2001), at(2100), 200), ok: true, payload: "{}" });

      const logged = await store.getWebhookDelivery(tenant.organizationId, id);
      expect(logged).toMatchObject({ id, state: "delivered", attempts: 3, lastError: null });
      expect(logged?.history).toEqual([
        { at: at(10), status: null, error: "connection failed: refused", durationMs: 85 },
        { at: at(1000), status: 503, error: "HTTP 503", durationMs: 250 },
        { at: at(2000), status: 204, error: null, durationMs: 40 },
      ]);
      const [listed] = await store.searchWebhookDeliveries({ ...scopeOf(tenant), limit: 10 });
      expect(listed).toEqual(logged);
    });

    it("pages newest first by (createdAt, id), filtered by run and by state", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 20 });
      const other = await makeTenant(store, { balance: 10_000_000 });
      const ids: string[] = [];
      for (const ms of [100, 200, 300, 300, 300, 400]) ids.push(await endedWithHook(store, tenant, at(ms)));
      const foreign = await endedWithHook(store, other, at(350));
      // Deliveries that ended in the same millisecond are ordered by id, largest first.
      const sameTime = [ids[2], ids[3], ids[4]].sort().reverse() as string[];
      const newestFirst = [ids[5], ...sameTime, ids[1], ids[0]];

      const pages: string[][] = [];
      let after: { createdAt: Date; id: string } | undefined;
      for (;;) {
        const page = await store.searchWebhookDeliveries({ ...scopeOf(tenant), limit: 2, after });
        if (page.length === 0) break;
        pages.push(page.map((d) => d.id));
        const last = page[page.length - 1];
        if (!last) break;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(pages).toEqual([newestFirst.slice(0, 2), newestFirst.slice(2, 4), newestFirst.slice(4, 6)]);

      const delivered = sameTime[1] as string;
      await claim(store, delivered, at(500));
      await store.recordWebhookAttempt(delivered, {
        ...attempt(at(500), at(510), 200),
        ok: true,
        payload: "{}",
      });
      const search = (extra: object) =>
        store
          .searchWebhookDeliveries({ ...scopeOf(tenant), limit: 10, ...extra })
          .then((found) => found.map((d) => d.id));
      expect(await search({ state: "delivered" })).toEqual([delivered]);
      expect(await search({ state: "pending" })).toEqual(newestFirst.filter((id) => id !== delivered));
      expect(await search({ state: "failed" })).toEqual([]);
      const runOf = async (id: string) =>
        (await store.getWebhookDelivery(tenant.organizationId, id))?.runId as string;
      expect(await search({ runId: await runOf(delivered) })).toEqual([delivered]);
      expect(await search({ runId: await runOf(delivered), state: "pending" })).toEqual([]);
      expect(
        await search({ runId: await runOf(delivered), after: { createdAt: at(300), id: delivered } }),
      ).toEqual([]);
      expect(await search({ runId: "run_00000000-0000-0000-0000-000000000000" })).toEqual([]);
      // Another organization's run, asked for by id, is not in this organization's log.
      const foreignRun = (await store.getWebhookDelivery(other.organizationId, foreign))?.runId;
      expect(await search({ runId: foreignRun })).toEqual([]);
      expect(await search({ after: { createdAt: at(300), id: sameTime[2] as string } })).toEqual([
        ids[1],
        ids[0],
      ]);
    });

    it("keeps each delivery in its run's organization and environment", async () => {
      const store = await makeStore();
      const live = await makeTenant(store, { balance: 10_000_000 });
      const test = await addKey(store, live.organizationId, { environment: "test" });
      const other = await makeTenant(store, { balance: 10_000_000 });
      const liveId = await endedWithHook(store, live, at(10));
      const testId = await endedWithHook(store, test, at(20));

      expect(await store.getWebhookDelivery(live.organizationId, testId)).toMatchObject({
        environment: "test",
      });
      expect(await store.getWebhookDelivery(other.organizationId, liveId)).toBeNull();
      expect(await store.getWebhookDelivery(live.organizationId, "msg_unknown")).toBeNull();
      const ids = async (tenant: Tenant) =>
        (await store.searchWebhookDeliveries({ ...scopeOf(tenant), limit: 10 })).map((d) => d.id);
      expect(await ids(live)).toEqual([liveId]);
      expect(await ids(test)).toEqual([testId]);
      expect(await ids(other)).toEqual([]);

      const redeliver = (tenant: Tenant, id: string) =>
        store.redeliverWebhook({ ...scopeOf(tenant), id, now: at(30) });
      expect(await redeliver(test, liveId)).toBeNull();
      expect(await redeliver(other, liveId)).toBeNull();
      expect(await redeliver(live, testId)).toBeNull();
      // Nothing was moved by the refused redeliveries.
      expect((await store.getWebhookDelivery(live.organizationId, liveId))?.nextAttemptAt).toEqual(at(10));
    });

    it("redelivers an ended delivery once, with the payload of its first attempt", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const id = await endedWithHook(store, tenant, at(10));
      await claim(store, id, at(10));
      await store.recordWebhookAttempt(id, { ...attempt(at(10), at(20), 200), ok: true, payload: '{"n":1}' });

      const queued = await store.redeliverWebhook({ ...scopeOf(tenant), id, now: at(5000) });
      expect(queued).toMatchObject({
        state: "pending",
        redelivery: true,
        nextAttemptAt: at(5000),
        attempts: 1,
      });
      expect(queued?.history).toHaveLength(1);
      expect(await store.claimWebhookDeliveries({ now: at(4999), limit: 10, leaseMs: 1000 })).toEqual([]);
      expect(await claim(store, id, at(5000))).toMatchObject({ payload: '{"n":1}', redelivery: true });
      await store.recordWebhookAttempt(id, {
        ...attempt(at(5000), at(5100), 500),
        ok: false,
        payload: '{"n":2}',
        error: "HTTP 500",
        retryAt: null,
      });
      expect(await store.getWebhookDelivery(tenant.organizationId, id)).toMatchObject({
        state: "failed",
        redelivery: false,
        attempts: 2,
        payload: '{"n":1}',
        lastError: "HTTP 500",
      });

      // A failed delivery comes back the same way.
      await store.redeliverWebhook({ ...scopeOf(tenant), id, now: at(9000) });
      await claim(store, id, at(9000));
      await store.recordWebhookAttempt(id, { ...attempt(at(9000), at(9010), 200), ok: true, payload: "{}" });
      const done = await store.getWebhookDelivery(tenant.organizationId, id);
      expect(done).toMatchObject({ state: "delivered", attempts: 3, lastError: null, deliveredAt: at(9010) });
      expect(done?.history.map((a) => a.status)).toEqual([200, 500, 200]);
    });

    it("makes a pending delivery due now, its retries going on as scheduled", async () => {
      const store = await makeStore();
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const id = await endedWithHook(store, tenant, at(10));
      await claim(store, id, at(10));
      await store.recordWebhookAttempt(id, {
        ...attempt(at(10), at(20), 500),
        ok: false,
        payload: "{}",
        error: "HTTP 500",
        retryAt: at(60_000),
      });
      const queued = await store.redeliverWebhook({ ...scopeOf(tenant), id, now: at(30) });
      expect(queued).toMatchObject({ state: "pending", redelivery: false, nextAttemptAt: at(30) });
      expect(await claim(store, id, at(30))).toMatchObject({ attempts: 1, redelivery: false });
    });
  });

  describe("webhook secret rotation", () => {
    it.each([
      ["live", "test"],
      ["test", "live"],
    ] as const)(
      "rotates the %s secret, keeping the replaced one until its expiry, and leaves the %s one",
      async (environment, other) => {
        const store = await makeStore();
        const tenant = await makeTenant(store);
        const before = await store.getOrganization(tenant.organizationId);
        if (!before) throw new Error("no organization");
        expect(before.webhookSecrets[environment].previous).toBeNull();
        const rotate = (secret: string, previousExpiresAt: Date, organizationId = tenant.organizationId) =>
          store.rotateWebhookSecret({ organizationId, environment, secret, previousExpiresAt });

        const rotated = await rotate("whsec_bmV3", at(86_400_000));
        expect(rotated?.webhookSecrets).toEqual({
          [environment]: {
            secret: "whsec_bmV3",
            previous: { secret: before.webhookSecrets[environment].secret, expiresAt: at(86_400_000) },
          },
          [other]: before.webhookSecrets[other],
        });
        expect((await store.findApiKeyByHash(tenant.keyHash))?.organization).toEqual(rotated);

        // Rotating again: only the secret just replaced stays as the previous one.
        const again = await rotate("whsec_bmV3ZXI=", at(90_000_000));
        expect(again?.webhookSecrets[environment]).toEqual({
          secret: "whsec_bmV3ZXI=",
          previous: { secret: "whsec_bmV3", expiresAt: at(90_000_000) },
        });
        expect(again?.webhookSecrets[other]).toEqual(before.webhookSecrets[other]);
        expect(await store.getOrganization(tenant.organizationId)).toEqual(again);
        expect(await rotate("whsec_eA==", at(1), "org_unknown")).toBeNull();
      },
    );
  });
}
