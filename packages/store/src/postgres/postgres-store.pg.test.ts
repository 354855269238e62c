import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { at, describeStoreContract, failed, makeTenant, newRun } from "../contract/index.js";
import type { StoreEvent } from "../types.js";
import { pgDatabase } from "./pg-database.js";
import { PostgresStore } from "./postgres-store.js";
import { DESTROY_TIMEOUT_MS, type TestDatabases, testDatabases } from "./test-databases.js";

let databases: TestDatabases;
beforeAll(async () => {
  databases = await testDatabases();
});
afterEach(async () => databases.cleanup());
afterAll(async () => databases.destroy(), DESTROY_TIMEOUT_MS);

describeStoreContract("PostgresStore on a Postgres server", () => databases.store());

describe("notifications across connections", () => {
  it("tells a listener on another connection about queued and ended runs, only after commit", async () => {
    const url = await databases.create();
    const listening = databases.storeAt(url);
    const writing = databases.storeAt(url);
    const heard: StoreEvent[] = [];
    const unsubscribe = await listening.subscribe((event) => heard.push(event));
    try {
      const tenant = await makeTenant(writing, { balance: 10_000_000 });
      const run = newRun(tenant);
      await writing.admitRun({ run, now: at(0) });
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "queued" }), { timeout: 5000 });
      // A rejected admission commits nothing and notifies nothing.
      const count = heard.length;
      const broke = await makeTenant(writing, { balance: 1 });
      await writing.admitRun({ run: newRun(broke), now: at(1) });
      await writing.completeRun({ runId: run.id, outcome: failed, now: at(2) });
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "ended", runId: run.id }), {
        timeout: 5000,
      });
      expect(heard.slice(count)).toEqual([{ kind: "ended", runId: run.id }]);
    } finally {
      await unsubscribe();
    }
  });
});

describe("a store's own events", () => {
  it("are heard once: its own NOTIFY echo is ignored, other processes' are heard", async () => {
    const url = await databases.create();
    const store = databases.storeAt(url);
    const other = databases.storeAt(url);
    const heard: StoreEvent[] = [];
    const unsubscribe = await store.subscribe((event) => heard.push(event));
    try {
      const tenant = await makeTenant(store, { balance: 10_000_000 });
      const run = newRun(tenant);
      await store.admitRun({ run, now: at(0) });
      await store.claimRuns({ workerId: "w1", limit: 1, leaseMs: 1000, now: at(1) });
      await store.completeRun({ runId: run.id, outcome: failed, now: at(2) });
      // Another process's change comes by NOTIFY, after the echoes of the three above: once it is
      // heard, any echo that was not ignored would have been heard too.
      const elsewhere = newRun(tenant);
      await other.admitRun({ run: elsewhere, now: at(3) });
      await other.completeRun({ runId: elsewhere.id, outcome: failed, now: at(4) });
      await vi.waitFor(() => expect(heard).toContainEqual({ kind: "ended", runId: elsewhere.id }), {
        timeout: 5000,
      });
      expect(heard).toEqual([
        { kind: "queued" },
        { kind: "changed", runIds: [run.id] },
        { kind: "ended", runId: run.id },
        { kind: "queued" },
        { kind: "ended", runId: elsewhere.id },
      ]);
    } finally {
      await unsubscribe();
    }
  });
});

describe("batched reads", () => {
  it("fails only the request whose run cannot be read, not the others of its batch", async () => {
    const pool = new pg.Pool({ connectionString: await databases.create(), max: 2 });
    const store = new PostgresStore(pgDatabase(pool));
    try {
      const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 10 });
      const [good, bad] = [newRun(tenant), newRun(tenant)];
      for (const run of [good, bad]) await store.admitRun({ run, now: at(0) });
      // Past 2^53 micro-USD: no number holds it exactly, so reading the row must fail.
      await pool.query("update runs set reserved = 9007199254740993 where id = $1", [bad.id]);
      const [read, broken] = await Promise.allSettled([
        store.getRun(tenant.organizationId, good.id),
        store.getRun(tenant.organizationId, bad.id),
      ]);
      expect(read).toMatchObject({ status: "fulfilled", value: { id: good.id } });
      expect(broken).toMatchObject({ status: "rejected", reason: { name: "RangeError" } });
    } finally {
      await store.close();
    }
  });
});

describe("batched admission", () => {
  it("admits each submit of a batch whose transaction failed on another submit, one by one", async () => {
    const store = await databases.store();
    const tenant = await makeTenant(store, { balance: 100_000_000, maxConcurrency: 10 });
    const [first, second] = [newRun(tenant), newRun(tenant)];
    // Three submits in one turn: the third reuses the first's run id, which fails the batch.
    const results = await Promise.allSettled([
      store.admitRun({ run: first, now: at(0) }),
      store.admitRun({ run: second, now: at(1) }),
      store.admitRun({ run: { ...newRun(tenant), id: first.id }, now: at(2) }),
    ]);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value.kind : "error"))).toEqual([
      "admitted",
      "admitted",
      "error",
    ]);
    expect(await store.getOrganization(tenant.organizationId)).toMatchObject({
      inFlight: 2,
      reserved: 1_000_000,
    });
  });
});
