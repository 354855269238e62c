/**
 * Deps for unit tests of the background loops (worker, sweeper, dispatcher): a real MemoryStore,
 * a real blob directory, a ManualClock for all time, a log the test can read, and a provider the
 * test drives by hand.
 */
import { copyFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { MODEL_SLUGS, type ModelSlug, type WebhookSubscription } from "@refvid/core";
import { MemoryStore, type Store, type StoreEvent } from "@refvid/store";
import { makeTenant, newRun } from "@refvid/store/testing";
import pino from "pino";
import { loadConfig } from "../src/config.js";
import type { AppDeps } from "../src/deps.js";
import { ManualClock } from "../src/manual-clock.js";
import type { Provider, ProviderContext, ProviderJob, ProviderResult } from "../src/providers/types.js";
import { buildDeps } from "../src/runtime.js";

export const T0 = new Date("2030-01-01T00:00:00.000Z");

export interface HeldJob {
  job: ProviderJob;
  signal: AbortSignal;
  /**
   * Writes a video into the job's directory and returns it, `seconds` long: a copy of `video`, or
   * bytes no player reads.
   */
  finish(seconds?: number, video?: string): Promise<void>;
  fail(error: Error): void;
}

/** A provider whose runs end when the test says so, or when their signal aborts. */
export class HeldProvider implements Provider {
  /** Set for a test whose runs download their references first (the media preflight). */
  usesReferences = false;
  readonly jobs: HeldJob[] = [];
  private readonly waiters: (() => void)[] = [];

  run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult> {
    return new Promise((resolve, reject) => {
      context.signal.addEventListener("abort", () => reject(context.signal.reason), { once: true });
      this.jobs.push({
        job,
        signal: context.signal,
        async finish(seconds = 4, video?: string) {
          const path = join(job.workDir, "out.mp4");
          if (video) await copyFile(video, path);
          else await writeFile(path, "not really a video");
          resolve({ path, durationSeconds: seconds });
        },
        fail: reject,
      });
      for (const wake of this.waiters.splice(0)) wake();
    });
  }

  /** The `n`th job (1-based) once the worker has started it. */
  async started(n = 1): Promise<HeldJob> {
    while (this.jobs.length < n) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.jobs[n - 1] as HeldJob;
  }
}

export interface LoopHarness {
  deps: AppDeps;
  clock: ManualClock;
  store: Store;
  provider: HeldProvider;
  logs: { level: number; msg: string }[];
  /** File ids the blob store was given, and those it was told to delete. */
  blobs: { put: string[]; deleted: string[] };
  organizationId: string;
  /** Admits a queued run created now; returns its id. */
  admit(options?: {
    webhookUrl?: string;
    webhookEvents?: WebhookSubscription[];
    /** Input fields beside the run's prompt and duration (model-d's `image_urls`). */
    input?: Record<string, unknown>;
  }): Promise<string>;
  /** Makes a change whose store event this process does not hear (as one missed from elsewhere). */
  unheard<T>(change: () => Promise<T>): Promise<T>;
  runOf(id: string): ReturnType<Store["getRun"]>;
  /** Resolves when the run's end is signalled in this process. */
  ended(id: string): Promise<void>;
  close(): Promise<void>;
}

export async function loopHarness(env: Record<string, string> = {}): Promise<LoopHarness> {
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-loops-"));
  const clock = new ManualClock(T0);
  const logs: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const provider = new HeldProvider();
  const providers: Partial<Record<ModelSlug, Provider>> = {};
  for (const slug of MODEL_SLUGS) providers[slug] = provider;
  const config = loadConfig({
    REFVID_STORE: "memory",
    REFVID_PROVIDER: "simulated",
    REFVID_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    ...env,
  });
  const store = new MemoryStore();
  // While `muted`, the store's events do not reach this process: as if another process's event was missed.
  let muted = false;
  const heard = new Proxy(store, {
    get(target, property) {
      if (property === "subscribe") {
        return (listener: (event: StoreEvent) => void) =>
          target.subscribe((event) => {
            if (!muted) listener(event);
          });
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  const deps = await buildDeps(config, { store: heard, logger, clock, scheduler: clock, providers });
  const blobs = { put: [] as string[], deleted: [] as string[] };
  const real = deps.blobs;
  deps.blobs = {
    put: (fileId, source, options) => {
      blobs.put.push(fileId);
      return real.put(fileId, source, options);
    },
    delete: (fileId) => {
      blobs.deleted.push(fileId);
      return real.delete(fileId);
    },
    stat: (fileId) => real.stat(fileId),
    read: (fileId, range) => real.read(fileId, range),
    deleteOlderThan: (kind, before) => real.deleteOlderThan(kind, before),
  };
  const tenant = await makeTenant(store, { balance: 100_000_000 });
  return {
    deps,
    clock,
    store,
    provider,
    logs,
    blobs,
    organizationId: tenant.organizationId,
    async admit({ input = {}, ...options } = {}) {
      const run = newRun(tenant, { createdAt: clock.now(), ...options });
      await store.admitRun({
        run: { ...run, input: { ...run.input, duration: "4s", ...input } },
        now: clock.now(),
      });
      return run.id;
    },
    async unheard(change) {
      muted = true;
      try {
        return await change();
      } finally {
        muted = false;
      }
    },
    runOf: (id) => store.getRun(tenant.organizationId, id),
    ended: (id) =>
      new Promise<void>((resolve) => {
        const off = deps.events.onRunEnded(id, () => {
          off();
          resolve();
        });
      }),
    close: () => rm(dataDir, { recursive: true, force: true }),
  };
}
