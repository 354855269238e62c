import { movesBalance, reconcile } from "@refvid/core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { OrganizationRecord, RunOutcome, RunRecord, Store } from "../types.js";
import { addKey, at, failed, makeTenant, newRun, succeeded, type Tenant } from "./fixtures.js";
import type { StoreFactory } from "./index.js";

type Op =
  | { op: "submit"; key: 0 | 1; seconds: number }
  | { op: "claim"; n: number }
  | { op: "end"; pick: number; how: "succeed" | "fail" | "cancel" | "timeout"; delivered: number }
  | { op: "topUp"; amount: number }
  | { op: "adjust"; amount: number }
  | { op: "expireLeases" };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant("submit" as const),
    key: fc.constantFrom(0 as const, 1 as const),
    seconds: fc.integer({ min: 1, max: 30 }),
  }),
  fc.record({ op: fc.constant("claim" as const), n: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    op: fc.constant("end" as const),
    pick: fc.nat(),
    how: fc.constantFrom("succeed" as const, "fail" as const, "cancel" as const, "timeout" as const),
    delivered: fc.integer({ min: 1, max: 40 }),
  }),
  fc.record({ op: fc.constant("topUp" as const), amount: fc.integer({ min: 1, max: 5_000_000 }) }),
  fc.record({ op: fc.constant("adjust" as const), amount: fc.integer({ min: -3_000_000, max: 3_000_000 }) }),
  fc.constant({ op: "expireLeases" as const }),
);

const UNIT = 100_000;
const ending = (how: "fail" | "cancel" | "timeout"): RunOutcome =>
  how === "fail"
    ? failed
    : {
        status: how === "cancel" ? "cancelled" : "timeout",
        error: { type: how === "cancel" ? "cancelled" : "timeout", code: 499, message: how },
      };

async function checkInvariants(store: Store, org: string, keys: Tenant[], runIds: string[], topUps: number) {
  const runs = (await Promise.all(runIds.map((id) => store.getRun(org, id)))) as RunRecord[];
  const inFlight = runs.filter((r) => r.status === "queued" || r.status === "processing");
  const live = (list: RunRecord[]) => list.filter((r) => r.environment === "live");
  const organization = await store.getOrganization(org);
  if (!organization) throw new Error("organization vanished");
  // Only live runs hold or take money; test runs are counted in flight apart.
  const charged = live(runs).reduce((sum, r) => sum + (r.charged ?? 0), 0);
  expect(organization.balance).toBe(topUps - charged);
  expect(organization.totalSpent).toBe(charged);
  expect(organization.reserved).toBe(live(inFlight).reduce((sum, r) => sum + r.reserved, 0));
  expect(organization.balance - organization.reserved).toBeGreaterThanOrEqual(0);
  expect(organization.inFlight).toBe(live(inFlight).length);
  expect(organization.testInFlight).toBe(inFlight.length - live(inFlight).length);
  for (const key of keys) {
    const record = await store.getApiKey(key.apiKeyId);
    const own = (list: RunRecord[]) => list.filter((r) => r.apiKeyId === key.apiKeyId);
    expect(record?.inFlight).toBe(own(inFlight).length);
    // What the key's runs hold against its budget, and what they were charged (all in one day).
    expect(record?.spend.reserved).toBe(own(inFlight).reduce((sum, r) => sum + r.reserved, 0));
    expect(record?.spend.day?.spent ?? 0).toBe(own(runs).reduce((sum, r) => sum + (r.charged ?? 0), 0));
  }
  await checkLedger(store, organization);
  for (const run of runs) {
    const terminal = run.status !== "queued" && run.status !== "processing";
    expect(run.charged !== null).toBe(terminal);
    if (terminal && run.status !== "succeeded") expect(run.charged).toBe(0);
  }
}

/**
 * The ledger adds up to the wallet: its sums are the balance and the reservation, and each entry's
 * figures are the running sums up to it, oldest first.
 */
export async function checkLedger(store: Store, organization: OrganizationRecord): Promise<void> {
  const entries = await store.listLedger({ organizationId: organization.id, limit: 100_000 });
  expect(reconcile(entries)).toEqual({ balance: organization.balance, reserved: organization.reserved });
  let balance = 0;
  let reserved = 0;
  for (const entry of [...entries].reverse()) {
    if (movesBalance(entry.kind)) balance += entry.amount;
    else reserved += entry.amount;
    expect({ id: entry.id, balance: entry.balance, reserved: entry.reserved }).toEqual({
      id: entry.id,
      balance,
      reserved,
    });
  }
}

export function invariantsContract(makeStore: StoreFactory, numRuns = 40): void {
  describe("invariants over random sequences", () => {
    it("keep money, slots and endings consistent after every step", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 40 }), async (ops) => {
          const store = await makeStore();
          const first = await makeTenant(store, { balance: 5_000_000, maxConcurrency: 4 });
          const second = await addKey(store, first.organizationId, {
            environment: "test",
            maxConcurrency: 3,
          });
          const keys = [first, second];
          const runIds: string[] = [];
          const ended = new Map<string, string>();
          let topUps = 5_000_000;
          let clock = 0;
          for (const step of ops) {
            clock += 1000;
            const now = at(clock);
            switch (step.op) {
              case "submit": {
                const run = newRun(keys[step.key] as Tenant, {
                  unitPrice: UNIT,
                  seconds: step.seconds,
                  createdAt: now,
                });
                const result = await store.admitRun({ run, now });
                if (result.kind === "admitted") runIds.push(run.id);
                break;
              }
              case "claim":
                await store.claimRuns({ workerId: "w", limit: step.n, leaseMs: 1500, now });
                break;
              case "end": {
                const id = runIds[step.pick % Math.max(runIds.length, 1)];
                if (!id) break;
                const outcome =
                  step.how === "succeed"
                    ? succeeded(step.delivered * UNIT, step.delivered)
                    : ending(step.how);
                const result = await store.completeRun({ runId: id, outcome, now });
                if (result.kind === "completed") {
                  expect(ended.has(id)).toBe(false);
                  ended.set(id, result.run.status);
                } else {
                  expect(result.kind).toBe("already_terminal");
                  expect(ended.has(id)).toBe(true);
                  if (result.kind === "already_terminal") expect(result.run.status).toBe(ended.get(id));
                }
                break;
              }
              case "topUp":
                await store.addTopUp({
                  id: `top_${clock}`,
                  organizationId: first.organizationId,
                  amount: step.amount,
                  note: null,
                  now,
                });
                topUps += step.amount;
                break;
              case "adjust": {
                const made = await store.adjustBalance({
                  organizationId: first.organizationId,
                  amount: step.amount,
                  reason: "invariants",
                  actor: { name: "test", requestId: `req_${clock}` },
                  now,
                });
                if (made?.kind === "made") topUps += step.amount;
                break;
              }
              case "expireLeases":
                await store.requeueExpiredLeases({ now, maxAttempts: 3, limit: 100 });
                break;
            }
            await checkInvariants(store, first.organizationId, keys, runIds, topUps);
          }
          await store.close();
        }),
        { numRuns },
      );
    });
  });
}
