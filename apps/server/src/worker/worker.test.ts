/**
 * The worker on a MemoryStore and a ManualClock: claiming, the run's deadline, lost leases,
 * cancel, shutdown and the retried end, each shown by moving the clock rather than waiting.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { runErrors } from "@refvid/core";
import type { Store, StoreConnectionLost } from "@refvid/store";
import { afterEach, describe, expect, it } from "vitest";
import { type LoopHarness, loopHarness, T0 } from "../../test/loop-harness.js";
import { Sweeper } from "./sweeper.js";
import { Worker } from "./worker.js";

const LEASE_MS = 30_000;
const harnesses: LoopHarness[] = [];
const workers: Worker[] = [];

const servers: Server[] = [];

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop(0);
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const h of harnesses.splice(0)) await h.close();
});

async function setup(
  env: Record<string, string> = {},
  wrapStore?: (store: Store) => Store,
  downloadSlots?: number,
) {
  const h = await loopHarness(env);
  harnesses.push(h);
  if (wrapStore) h.deps.store = wrapStore(h.deps.store);
  const worker = new Worker(h.deps, {
    workerId: "w1",
    concurrency: 2,
    leaseMs: LEASE_MS,
    pollMs: 1000,
    ...(downloadSlots ? { downloadSlots } : {}),
  });
  workers.push(worker);
  return { ...h, worker };
}

/**
 * Another process's worker takes the run over: its lease is treated as lapsed and the run claimed
 * again there, before this process hears of the requeue.
 */
async function reclaimElsewhere(h: LoopHarness, at: Date) {
  const far = new Date(at.getTime() + 10 * LEASE_MS);
  return h.unheard(async () => {
    await h.deps.store.requeueExpiredLeases({ now: far, maxAttempts: 10, limit: 10 });
    return h.deps.store.claimRuns({ workerId: "w2", limit: 10, leaseMs: LEASE_MS, now: at });
  });
}

describe("the worker", () => {
  it("claims a queued run when its poll comes round and ends it with the provider's video", async () => {
    const { worker, clock, provider, admit, unheard, ended, runOf, blobs, deps } = await setup();
    worker.start();
    const id = await unheard(() => admit()); // no queued event: only the poll finds it
    await clock.advance(999);
    expect(provider.jobs).toHaveLength(0);
    await clock.advance(1);
    const job = await provider.started();
    expect(job.job.runId).toBe(id);
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "w1", attempts: 1 });

    const end = ended(id);
    await job.finish(4);
    await end;
    const run = await runOf(id);
    expect(run).toMatchObject({ status: "succeeded", charged: 400_000, billableSeconds: 4, error: null });
    expect(blobs.put).toEqual([run?.output?.fileId]);
    expect(blobs.deleted).toEqual([]);
    expect(await deps.blobs.stat(run?.output?.fileId as string)).not.toBeNull();
  });

  it("claims at once on a queued signal, without waiting for the poll", async () => {
    const { worker, provider, admit } = await setup();
    worker.start();
    const id = await admit(); // the store's queued event
    await waitFor(() => provider.jobs.length === 1);
    expect(provider.jobs[0]?.job.runId).toBe(id);
  });

  it("claims a run queued while a claim is in flight right after that claim, not at the next poll", async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let claims = 0;
    const { worker, clock, provider, admit } = await setup(
      {},
      (store) =>
        new Proxy(store, {
          get(target, property) {
            if (property === "claimRuns") {
              return async (...args: Parameters<Store["claimRuns"]>) => {
                const runs = await target.claimRuns(...args);
                if (++claims === 1) await held; // the first claim found nothing and is slow to answer
                return runs;
              };
            }
            const value = Reflect.get(target, property, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    worker.start();
    await clock.advance(0);
    expect(claims).toBe(1);
    const id = await admit(); // its queued event arrives while the first claim is in flight
    release();
    await waitFor(() => provider.jobs.length === 1);
    expect(provider.jobs[0]?.job.runId).toBe(id);
    expect(clock.now()).toEqual(T0); // no poll was needed
  });

  it("ends a run as timeout when the clock passes its deadline, counted from admission", async () => {
    const { worker, clock, provider, admit, ended, runOf } = await setup({ REFVID_RUN_TIMEOUT_MS: "60000" });
    const id = await admit();
    await clock.advance(20_000); // queued for 20 s before the worker starts
    worker.start();
    const job = await provider.started();
    const end = ended(id);
    await clock.advance(39_999);
    expect(job.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(job.signal.aborted).toBe(true);
    await end;
    expect(await runOf(id)).toMatchObject({
      status: "timeout",
      error: runErrors.timeout(60_000),
      charged: 0,
      output: null,
    });
  });

  it("keeps its lease alive while the provider works", async () => {
    const { worker, clock, provider, admit, runOf } = await setup();
    const id = await admit();
    worker.start();
    await provider.started();
    await clock.advance(5 * LEASE_MS);
    const run = await runOf(id);
    expect(run).toMatchObject({ status: "processing", leaseOwner: "w1" });
    expect(run?.leaseExpiresAt?.getTime()).toBeGreaterThan(clock.now().getTime());
  });

  it("does not end a run whose lease it lost, and deletes the video it made for it", async () => {
    const h = await setup();
    const { worker, clock, provider, admit, runOf, blobs, deps } = h;
    const id = await admit();
    worker.start();
    const job = await provider.started();
    const endedHere: string[] = [];
    deps.events.on("ended", () => endedHere.push("ended"));
    expect(await reclaimElsewhere(h, clock.now())).toHaveLength(1);

    await job.finish(4); // the loser finishes before its next heartbeat
    await worker.stop(LEASE_MS); // once its attempt is over (the clock stands still)
    expect(blobs.put).toHaveLength(1);
    expect(blobs.deleted).toEqual(blobs.put);
    expect(await deps.blobs.stat(blobs.put[0] as string)).toBeNull();
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "w2", charged: null });
    expect(endedHere).toEqual([]);
  });

  it("stops the provider at the next heartbeat once its lease is lost", async () => {
    const h = await setup();
    const { worker, clock, provider, admit, runOf, blobs } = h;
    const id = await admit();
    worker.start();
    const job = await provider.started();
    await reclaimElsewhere(h, clock.now());
    await clock.advance(LEASE_MS / 3 - 1);
    expect(job.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(job.signal.aborted).toBe(true);
    expect(String(job.signal.reason)).toMatch(/lease/);
    await worker.stop(0);
    expect(blobs.put).toEqual([]);
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "w2", charged: null });
  });

  it("stops the provider through its signal when the run is cancelled", async () => {
    const { worker, clock, provider, admit, runOf, deps, organizationId } = await setup();
    const id = await admit();
    worker.start();
    const job = await provider.started();
    const cancelled = await deps.store.completeRun({
      runId: id,
      organizationId,
      outcome: { status: "cancelled", error: runErrors.cancelled() },
      now: clock.now(),
    });
    expect(cancelled.kind).toBe("completed"); // the store's ended event stops the worker
    expect(job.signal.aborted).toBe(true);
    expect(String(job.signal.reason)).toMatch(/cancel/);
    await worker.stop(0);
    expect(await runOf(id)).toMatchObject({ status: "cancelled", error: runErrors.cancelled(), charged: 0 });
  });

  it("on shutdown, waits the grace period, then leaves the run in hand to be requeued", async () => {
    const { worker, clock, provider, admit, runOf, deps } = await setup();
    const id = await admit();
    worker.start();
    const job = await provider.started();
    let stopped = false;
    const stopping = worker.stop(5000).then(() => {
      stopped = true;
    });
    await clock.advance(4999);
    expect(job.signal.aborted).toBe(false);
    expect(stopped).toBe(false);
    await clock.advance(1);
    await stopping;
    expect(job.signal.aborted).toBe(true);
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "w1", charged: null });

    // Nobody renews the lease now: once it lapses the sweeper puts the run back in the queue.
    await clock.advance(LEASE_MS - 5000);
    await new Sweeper(deps).sweep();
    expect(await runOf(id)).toMatchObject({ status: "queued", leaseOwner: null, attempts: 1 });
  });

  it("finishes a run that ends within the grace period", async () => {
    const { worker, clock, provider, admit, runOf } = await setup();
    const id = await admit();
    worker.start();
    const job = await provider.started();
    const stopping = worker.stop(5000);
    await clock.advance(1000);
    await job.finish(4);
    await stopping;
    expect(job.signal.aborted).toBe(false);
    expect(await runOf(id)).toMatchObject({ status: "succeeded" });
    expect(clock.pendingTimers).toBe(0);
  });

  it("tries again to end the run after 100 and then 200 ms while the store's connection is lost", async () => {
    let failures = 2;
    const lost = (): StoreConnectionLost =>
      Object.assign(new Error("The database connection was lost"), {
        code: "store_connection_lost" as const,
        committed: false as const,
      });
    const { worker, clock, provider, admit, runOf, logs } = await setup(
      {},
      (store) =>
        new Proxy(store, {
          get(target, property) {
            if (property === "completeRun") {
              return (...args: Parameters<Store["completeRun"]>) => {
                if (failures === 0) return target.completeRun(...args);
                failures -= 1;
                return Promise.reject(lost());
              };
            }
            const value = Reflect.get(target, property, target);
            return typeof value === "function" ? value.bind(target) : value;
          },
        }),
    );
    const id = await admit();
    worker.start();
    const job = await provider.started();
    await job.finish(4);
    const retried = () => logs.filter((l) => l.msg.startsWith("store connection lost while ending")).length;
    await waitFor(() => retried() === 1);
    await clock.advance(99);
    expect(failures).toBe(1);
    await clock.advance(1);
    expect(failures).toBe(0);
    expect(retried()).toBe(2);
    await clock.advance(199);
    expect((await runOf(id))?.status).toBe("processing");
    await clock.advance(1);
    expect(await runOf(id)).toMatchObject({ status: "succeeded", attempts: 1 });
  });
});

describe("the worker's download slots", () => {
  /** A reference server whose PNGs arrive only once the test lets them. */
  async function heldReferences() {
    const waiting: (() => void)[] = [];
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "image/png" });
      res.write(Buffer.from("89504e470d0a1a0a0000000d49484452", "hex"));
      waiting.push(() => res.end(Buffer.alloc(64)));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push(server);
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ref.png`,
      waiting,
      releaseAll: () => {
        for (const end of waiting.splice(0)) end();
      },
    };
  }

  it("puts a run back in the queue, unattempted, while its organization holds its download slots", async () => {
    // Two download slots: one organization may hold one. No floor: the test holds downloads open.
    const { worker, clock, provider, admit, unheard, runOf, logs } = await setup(
      { REFVID_MIN_DOWNLOAD_BYTES_PER_S: "0" },
      undefined,
      2,
    );
    provider.usesReferences = true;
    const refs = await heldReferences();
    const input = { image_urls: [refs.url] };
    // Both are claimed by the same poll: the one that comes second to the download slots finds
    // its organization's one slot taken.
    const admitted = [await unheard(() => admit({ input })), await unheard(() => admit({ input }))];
    worker.start();
    const refusal = () =>
      logs.find((l) => l.msg.startsWith("no download slot is free")) as { runId?: string };
    await waitFor(() => refusal() !== undefined);
    const later = refusal().runId as string;
    const first = admitted.find((id) => id !== later) as string;
    expect(admitted).toContain(later);
    expect(await runOf(later)).toMatchObject({ status: "queued", attempts: 0, startedAt: null });
    await waitFor(() => refs.waiting.length === 1);

    // Polls leave it queued while the other run's reference downloads.
    await clock.advance(3000);
    expect(await runOf(later)).toMatchObject({ status: "queued", attempts: 0 });
    expect(refs.waiting).toHaveLength(1);

    // The download ends: that run generates, and the queued one is claimed at once, no poll needed.
    refs.releaseAll();
    const job = await provider.started();
    expect(job.job.runId).toBe(first);
    expect(job.job.references).toMatchObject([{ kind: "image", format: "png" }]);
    await waitFor(() => refs.waiting.length === 1);
    expect(await runOf(later)).toMatchObject({ status: "processing", attempts: 1 });
    refs.releaseAll();
    expect((await provider.started(2)).job.runId).toBe(later);
  });
});

/** Lets real I/O (the provider's file write, the blob move) finish: polls a condition each turn. */
async function waitFor(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition never held");
    await new Promise((resolve) => setImmediate(resolve));
  }
}
