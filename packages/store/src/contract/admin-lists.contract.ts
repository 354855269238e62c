import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Keyset, Store } from "../types.js";
import { addKey, at, failed, makeTenant, newRun, scopeOf, T0, WEBHOOK_SECRETS } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

/** Every page of a newest-first list, `limit` at a time, following each page's last keyset. */
async function allPages<R extends Keyset>(
  limit: number,
  page: (limit: number, after?: Keyset) => Promise<R[]>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let after: Keyset | undefined;
  for (let i = 0; i < 20; i++) {
    const found = await page(limit, after);
    if (found.length === 0) break;
    pages.push(found.map((r) => r.id));
    const last = found[found.length - 1] as R;
    after = { createdAt: last.createdAt, id: last.id };
  }
  return pages;
}

const chunks = (ids: string[], size: number) =>
  Array.from({ length: Math.ceil(ids.length / size) }, (_, i) => ids.slice(i * size, (i + 1) * size));

async function makeOrganization(store: Store, name: string, createdAt: Date): Promise<string> {
  const id = `org_${randomUUID().replaceAll("-", "")}`;
  await store.createOrganization({
    id,
    name,
    webhookSecrets: WEBHOOK_SECRETS,
    now: createdAt,
  });
  return id;
}

async function makeKey(store: Store, organizationId: string, createdAt: Date): Promise<string> {
  const id = `key_${randomUUID().replaceAll("-", "")}`;
  await store.createApiKey({
    id,
    organizationId,
    name: null,
    environment: "live",
    keyHash: randomUUID(),
    keyPrefix: "sk-live-x",
    maxConcurrency: 10,
    rateLimitPerMinute: 120,
    now: createdAt,
  });
  return id;
}

export function adminListsContract(makeStore: StoreFactory): void {
  describe("admin lists", () => {
    it("lists organizations newest first by keyset, filtered by a case-sensitive name prefix", async () => {
      const store = await makeStore();
      const names = ["Acme Studios", "acme labs", "Beta", "Acme Films", "Acme Studios 2"];
      const ids: string[] = [];
      for (const [i, name] of names.entries()) ids.push(await makeOrganization(store, name, at(1000 * i)));
      // Two made in the same millisecond are ordered by id.
      const twins = [
        await makeOrganization(store, "Acme twin", at(9000)),
        await makeOrganization(store, "Acme twin", at(9000)),
      ];
      const newest = [...twins.sort().reverse(), ...[...ids].reverse()];

      const list = (namePrefix?: string) => (limit: number, after?: Keyset) =>
        store.listOrganizations({
          limit,
          ...(after ? { after } : {}),
          ...(namePrefix ? { namePrefix } : {}),
        });
      expect(await allPages(3, list())).toEqual(chunks(newest, 3));
      const acme = newest.filter((id) => id !== ids[1] && id !== ids[2]);
      expect(await allPages(2, list("Acme"))).toEqual(chunks(acme, 2));
      expect((await allPages(10, list("Acme Studios"))).flat()).toEqual([ids[4], ids[0]]);
      expect(await allPages(10, list("acme"))).toEqual([[ids[1]]]);
      expect(await allPages(10, list("Nobody"))).toEqual([]);
      const [first] = await store.listOrganizations({ limit: 1 });
      expect(first).toEqual(await store.getOrganization(first?.id ?? ""));
    });

    it("lists an organization's keys newest first, revoked ones included unless filtered", async () => {
      const store = await makeStore();
      const org = await makeOrganization(store, "Keys", T0);
      const other = await makeOrganization(store, "Other", T0);
      const keys: string[] = [];
      for (let i = 0; i < 5; i++) keys.push(await makeKey(store, org, at(1000 * i)));
      await makeKey(store, other, at(2500));
      await store.revokeApiKey(keys[1] as string, at(10_000));
      await store.revokeApiKey(keys[3] as string, at(11_000));
      const newest = [...keys].reverse();

      const list = (revoked?: boolean) => (limit: number, after?: Keyset) =>
        store.listApiKeys({
          organizationId: org,
          limit,
          ...(after ? { after } : {}),
          ...(revoked === undefined ? {} : { revoked }),
        });
      expect(await allPages(2, list())).toEqual(chunks(newest, 2));
      expect((await allPages(10, list(true))).flat()).toEqual([keys[3], keys[1]]);
      expect((await allPages(1, list(false))).flat()).toEqual([keys[4], keys[2], keys[0]]);
      const [revoked] = await store.listApiKeys({ organizationId: org, limit: 1, revoked: true });
      expect(revoked).toEqual(await store.getApiKey(keys[3] as string));
      expect(revoked?.revokedAt).toEqual(at(11_000));
      expect(await store.listApiKeys({ organizationId: "org_nope", limit: 10 })).toEqual([]);
    });

    it("lists an organization's top-ups newest first; a rejected top-up is not one", async () => {
      const store = await makeStore();
      const org = await makeOrganization(store, "Wallet", T0);
      const other = await makeOrganization(store, "Other", T0);
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = `top_${randomUUID()}`;
        await store.addTopUp({
          id,
          organizationId: org,
          amount: 1_000_000 * (i + 1),
          note: `n${i}`,
          now: at(i),
        });
        ids.push(id);
      }
      await store.addTopUp({
        id: `top_${randomUUID()}`,
        organizationId: other,
        amount: 5,
        note: null,
        now: at(2),
      });
      const rejected = await store.addTopUp({
        id: `top_${randomUUID()}`,
        organizationId: org,
        amount: 5_000_000_000_000_000,
        note: null,
        now: at(9),
      });
      expect(rejected?.kind).toBe("rejected");

      const list = (limit: number, after?: Keyset) =>
        store.listTopUps({ organizationId: org, limit, ...(after ? { after } : {}) });
      expect(await allPages(3, list)).toEqual(chunks([...ids].reverse(), 3));
      expect(await store.listTopUps({ organizationId: org, limit: 1 })).toEqual([
        {
          id: ids[3],
          organizationId: org,
          amount: 4_000_000,
          actor: null,
          reversedAt: null,
          note: "n3",
          createdAt: at(3),
        },
      ]);
      expect(await store.listTopUps({ organizationId: "org_nope", limit: 10 })).toEqual([]);
    });
  });

  describe("run search by key and across organizations", () => {
    /** Org A with a live key, a second live key and a test key; org B with a live key; runs interleaved in time. */
    async function world(store: Store) {
      const a = await makeTenant(store, { balance: 100_000_000 });
      const a2 = await addKey(store, a.organizationId);
      const aTest = await addKey(store, a.organizationId, { environment: "test" });
      const b = await makeTenant(store, { balance: 100_000_000 });
      const plan = [a, aTest, b, a2, a, aTest, b, a, aTest, a2];
      const ids: string[] = [];
      for (const [i, tenant] of plan.entries()) {
        const run = newRun(tenant, {
          createdAt: at(1000 * (i + 1)),
          seconds: 1,
          endpoint: i % 3 === 0 ? "lab-c/model-c/reference-to-video" : "lab-d/model-d/reference-to-video",
        });
        await store.admitRun({ run, now: run.createdAt });
        ids.push(run.id);
      }
      await store.completeRun({ runId: ids[4] as string, outcome: failed, now: at(20_000) });
      await store.completeRun({ runId: ids[5] as string, outcome: failed, now: at(20_000) });
      return { a, a2, aTest, b, ids, newest: [...ids].reverse() };
    }

    it("filters the organization's search by key, never past its organization and environment", async () => {
      const store = await makeStore();
      const { a, a2, aTest, b, ids } = await world(store);
      const search = (apiKeyId: string, extra: object = {}) =>
        store
          .searchRuns({ ...scopeOf(a), apiKeyId, limit: 10, ...extra })
          .then((runs) => runs.map((r) => r.id));
      expect(await search(a2.apiKeyId)).toEqual([ids[9], ids[3]]);
      expect(await search(a.apiKeyId)).toEqual([ids[7], ids[4], ids[0]]);
      expect(await search(a.apiKeyId, { statuses: ["queued"] })).toEqual([ids[7], ids[0]]);
      expect(await search(a.apiKeyId, { limit: 1, after: { createdAt: at(8000), id: ids[7] } })).toEqual([
        ids[4],
      ]);
      expect(await search(b.apiKeyId)).toEqual([]);
      expect(await search(aTest.apiKeyId)).toEqual([]);
      expect(
        (await store.searchRuns({ ...scopeOf(aTest), apiKeyId: aTest.apiKeyId, limit: 10 })).map((r) => r.id),
      ).toEqual([ids[8], ids[5], ids[1]]);
    });

    it("searches every organization and both environments newest first, with every filter", async () => {
      const store = await makeStore();
      const { a, a2, aTest, b, ids, newest } = await world(store);
      const all = (filters: object) => (limit: number, after?: Keyset) =>
        store.searchAllRuns({ ...filters, limit, ...(after ? { after } : {}) });
      expect(await allPages(3, all({}))).toEqual(chunks(newest, 3));
      // One organization's live and test runs, merged in order across pages.
      const ofA = newest.filter((id) => ![ids[2], ids[6]].includes(id));
      expect(await allPages(3, all({ organizationId: a.organizationId }))).toEqual(chunks(ofA, 3));
      expect(
        (await allPages(2, all({ organizationId: a.organizationId, environment: "test" }))).flat(),
      ).toEqual([ids[8], ids[5], ids[1]]);
      expect((await allPages(2, all({ environment: "test" }))).flat()).toEqual([ids[8], ids[5], ids[1]]);
      expect((await allPages(1, all({ apiKeyId: b.apiKeyId }))).flat()).toEqual([ids[6], ids[2]]);
      expect(
        (await allPages(5, all({ apiKeyId: a2.apiKeyId, organizationId: b.organizationId }))).flat(),
      ).toEqual([]);
      expect((await allPages(5, all({ statuses: ["failed"] }))).flat()).toEqual([ids[5], ids[4]]);
      expect((await allPages(5, all({ endpoint: "lab-c/model-c/reference-to-video" }))).flat()).toEqual([
        ids[9],
        ids[6],
        ids[3],
        ids[0],
      ]);
      expect((await allPages(5, all({ createdAfter: at(3000), createdBefore: at(6000) }))).flat()).toEqual([
        ids[4],
        ids[3],
        ids[2],
      ]);
      expect(
        (
          await allPages(
            5,
            all({
              organizationId: a.organizationId,
              apiKeyId: aTest.apiKeyId,
              environment: "test",
              statuses: ["queued", "failed"],
              endpoint: "lab-d/model-d/reference-to-video",
              createdAfter: at(2000),
              createdBefore: at(9000),
            }),
          )
        ).flat(),
      ).toEqual([ids[5], ids[1]]);
      const [run] = await store.searchAllRuns({ limit: 1 });
      expect(run).toEqual(await store.getRun(a.organizationId, ids[9] as string));
    });
  });
}
