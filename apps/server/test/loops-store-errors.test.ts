/**
 * The worker, the sweeper and the webhook dispatcher over a store that loses its database
 * connection now and then: each failing iteration is logged and the loop goes on, and a run whose
 * end could not be recorded at first is ended as soon as the store answers again.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { runErrors } from "@refvid/core";
import { MemoryStore, type Store, type StoreConnectionLost } from "@refvid/store";
import { makeTenant, newRun } from "@refvid/store/testing";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import type { AppDeps } from "../src/deps.js";
import { ManualClock } from "../src/manual-clock.js";
import { buildDeps } from "../src/runtime.js";
import { WebhookDispatcher } from "../src/webhooks/dispatcher.js";
import { Sweeper } from "../src/worker/sweeper.js";
import { Worker } from "../src/worker/worker.js";
import { eventually, startReceiver } from "./harness.js";

type Method = {
  [K in keyof Store]-?: Store[K] extends (...args: never[]) => unknown ? K : never;
}[keyof Store];

const connectionLost = (committed: false | "unknown"): StoreConnectionLost =>
  Object.assign(new Error("The database connection was lost: terminating connection"), {
    code: "store_connection_lost" as const,
    committed,
  });

/**
 * A real store whose next calls of some methods fail as if the connection dropped: `before`
 * fails without doing anything, `after` does the call and then loses its answer.
 */
function blipping(store: Store) {
  const plan = new Map<string, { times: number; when: "before" | "after" }>();
  const proxy = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== "function") return value;
      return async (...args: unknown[]) => {
        const fault = plan.get(String(property));
        if (!fault || fault.times === 0) return value.apply(target, args);
        fault.times -= 1;
        if (fault.when === "before") throw connectionLost(false);
        await value.apply(target, args);
        throw connectionLost("unknown");
      };
    },
  });
  return {
    store: proxy,
    fail(method: Method, times: number, when: "before" | "after" = "before") {
      plan.set(method, { times, when });
    },
  };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** `clock`: a ManualClock for all time (the sweeper's and the dispatcher's tests); real time otherwise. */
async function setup(env: Record<string, string> = {}, clock?: ManualClock) {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-blips-"));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const logs: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "warn" },
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const faulty = blipping(new MemoryStore());
  const config = loadConfig({
    REFVID_STORE: "memory",
    REFVID_PROVIDER: "simulated",
    REFVID_SIMULATED_LATENCY_MS: "20",
    REFVID_DATA_DIR: dataDir,
    REFVID_WEBHOOK_RETRY_DELAYS_MS: "0,100",
    ...env,
  });
  const deps: AppDeps = await buildDeps(config, {
    store: faulty.store,
    logger,
    ...(clock ? { clock, scheduler: clock } : {}),
  });
  const tenant = await makeTenant(deps.store, { balance: 100_000_000 });
  const admit = async (webhookUrl?: string) => {
    const now = deps.clock.now();
    const run = newRun(tenant, { createdAt: now, ...(webhookUrl ? { webhookUrl } : {}) });
    await deps.store.admitRun({ run: { ...run, input: { ...run.input, duration: "4s" } }, now });
    return run.id;
  };
  const runOf = (id: string) => deps.store.getRun(tenant.organizationId, id);
  const ended = (id: string, timeoutMs = 3000) =>
    eventually(
      async () => {
        const run = await runOf(id);
        return run && run.status !== "queued" && run.status !== "processing" ? run : undefined;
      },
      timeoutMs,
      `run ${id} to end`,
    );
  return { deps, fail: faulty.fail, logs, admit, ended, runOf };
}

function startWorker(deps: AppDeps) {
  // A lease far longer than the test: a run must not need the sweeper to end.
  const worker = new Worker(deps, { workerId: "w1", concurrency: 2, leaseMs: 60_000, pollMs: 100 });
  worker.start();
  cleanups.push(() => worker.stop(1000));
  return worker;
}

describe("the worker", () => {
  it("ends a run at once when recording its end first lost the connection", async () => {
    const { deps, fail, logs, admit, ended } = await setup();
    fail("completeRun", 2);
    startWorker(deps);
    const run = await ended(await admit());
    expect(run).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(logs.map((l) => l.msg)).toContain("store connection lost while ending a run; trying again");
  });

  it("keeps the video when the try that lost its answer had ended the run", async () => {
    const { deps, fail, admit, ended } = await setup();
    fail("completeRun", 1, "after");
    const worker = startWorker(deps);
    const run = await ended(await admit());
    expect(run).toMatchObject({ status: "succeeded", attempts: 1 });
    await worker.stop(5000); // the worker is done with the run, its second try included
    expect(await deps.blobs.stat(run.output?.fileId as string)).not.toBeNull();
  });

  it("goes on claiming after claims fail", async () => {
    const { deps, fail, logs, admit, ended } = await setup();
    fail("claimRuns", 3);
    startWorker(deps);
    expect(await ended(await admit())).toMatchObject({ status: "succeeded" });
    expect(logs.filter((l) => l.msg === "claiming runs failed")).toHaveLength(3);
  });
});

describe("the sweeper", () => {
  it("logs a failed sweep and times the run out on a later one", async () => {
    const clock = new ManualClock();
    const { deps, fail, logs, admit, runOf } = await setup({ REFVID_RUN_TIMEOUT_MS: "1000" }, clock);
    const sweeper = new Sweeper(deps, { intervalMs: 50 });
    fail("findOverdueRuns", 3);
    const id = await admit();
    sweeper.start();
    cleanups.push(() => sweeper.stop());
    await clock.advance(150); // three sweeps, each failing
    expect(logs.filter((l) => l.msg === "sweep failed")).toHaveLength(3);
    await clock.advance(1000);
    expect(await runOf(id)).toMatchObject({ status: "timeout" });
    expect(logs.filter((l) => l.msg === "sweep failed")).toHaveLength(3);
  });
});

describe("the webhook dispatcher", () => {
  it("logs failed claims and delivers on a later tick", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const clock = new ManualClock();
    const { deps, fail, logs, admit } = await setup({}, clock);
    const runId = await admit(`${receiver.url}/hook`);
    await deps.store.completeRun({
      runId,
      outcome: { status: "failed", error: runErrors.providerError("the model refused") },
      now: clock.now(),
    });
    fail("claimWebhookDeliveries", 2);
    const dispatcher = new WebhookDispatcher(deps, { pollMs: 50 });
    dispatcher.start();
    cleanups.push(() => dispatcher.stop());
    await clock.advance(100); // two polls, each failing to claim
    expect(logs.filter((l) => l.msg === "webhook dispatch failed")).toHaveLength(2);
    expect(receiver.requests).toHaveLength(0);
    await clock.advance(50);
    await receiver.waitFor(1, 5000);
    expect(logs.filter((l) => l.msg === "webhook dispatch failed")).toHaveLength(2);
  });
});
