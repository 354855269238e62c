/**
 * The worker's claim loop: claims queued runs under a lease up to its free generation slots (at
 * once on the store's `queued` event, else at each poll), hands each to `attemptRun`
 * (run-attempt.ts), leaves a model's runs in the queue for a moment when its first provider is
 * full, and claims nothing for a while when a run found the disk full. A run's references
 * download on a download slot instead of its generation slot (slots.ts); runs that would download
 * while their organization holds its share of the download slots (or while all are taken) stay
 * queued. Stopping waits a grace period for the runs in hand, then leaves them to their leases.
 */
import type { ModelSlug } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import { sleep } from "../clock.js";
import type { AppDeps } from "../deps.js";
import { PeriodicTask } from "../periodic-task.js";
import { attemptRun } from "./run-attempt.js";
import { WorkerSlots } from "./slots.js";
import { ProviderFull, StorageFullStop, stopReason } from "./stops.js";

/** How long a worker claims nothing after a run found the disk full. */
const STORAGE_FULL_PAUSE_MS = 10_000;

/** How often the worker looks for queued runs when no `queued` event woke it. */
export const DEFAULT_POLL_MS = 1000;

export interface WorkerOptions {
  workerId: string;
  /** Generation slots: runs this process generates at once. */
  concurrency: number;
  /** Download slots: runs whose references this process downloads at once (REFVID_WORKER_DOWNLOAD_SLOTS). */
  downloadSlots?: number;
  leaseMs?: number;
  pollMs?: number;
}

export class Worker {
  private readonly active = new Map<string, AbortController>();
  private readonly slots: WorkerSlots;
  private readonly leaseMs: number;
  private readonly polling: PeriodicTask;
  private stopped = false;
  private offQueued: () => void = () => {};
  private readonly finished = new Set<Promise<void>>();
  /** Providers found full, and until when their models' runs are left in the queue. */
  private readonly fullUntil = new Map<string, number>();
  /** Until when this worker claims nothing, after a run found the disk full. */
  private pausedUntil = 0;

  constructor(
    private readonly deps: AppDeps,
    private readonly options: WorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.slots = new WorkerSlots(
      options.concurrency,
      options.downloadSlots ?? deps.config.workerDownloadSlots,
      () => void this.polling.trigger(),
    );
    this.polling = new PeriodicTask({
      intervalMs: options.pollMs ?? DEFAULT_POLL_MS,
      scheduler: deps.scheduler,
      logger: deps.logger,
      failureMessage: "claiming runs failed",
      step: () => this.claim(),
    });
  }

  start(): void {
    this.offQueued = this.deps.events.on("queued", () => void this.polling.trigger());
    this.polling.start({ immediately: true });
  }

  /** Claims no more runs; those in hand go on (a stopping process drains before `stop`). */
  async stopClaiming(): Promise<void> {
    this.stopped = true;
    this.offQueued();
    await this.polling.stop();
  }

  /**
   * Stops claiming and waits up to `graceMs` for the runs in hand, then aborts them and leaves them
   * to their leases: the sweeper puts them back in the queue.
   */
  async stop(graceMs = 10_000): Promise<void> {
    await this.stopClaiming();
    const all = Promise.all(this.finished);
    if (graceMs > 0) {
      const graceOver = new AbortController();
      await Promise.race([all, sleep(this.deps.scheduler, graceMs, graceOver.signal)]);
      graceOver.abort();
    }
    for (const controller of this.active.values()) controller.abort(stopReason("shutdown"));
    await all;
  }

  /** Claims queued runs up to the free slots. */
  private async claim(): Promise<void> {
    while (!this.stopped) {
      const free = this.slots.claimable;
      if (free <= 0) return;
      const now = this.deps.clock.now();
      if (now.getTime() < this.pausedUntil) return;
      const downloading = this.downloadingModels();
      const skipOrganizations = this.slots.organizationsAtShare();
      const runs = await this.deps.store.claimRuns({
        workerId: this.options.workerId,
        limit: free,
        leaseMs: this.leaseMs,
        now,
        skipEndpoints: [
          ...this.waitingModels(now.getTime()),
          // No download slot at all: whoever's they are, runs that would download stay queued.
          ...(this.slots.downloadsFull ? downloading : []),
        ],
        ...(skipOrganizations.length > 0 && downloading.length > 0
          ? { skipDownloads: { organizationIds: skipOrganizations, endpoints: downloading } }
          : {}),
      });
      if (runs.length === 0) return;
      // Claimed while stopping: leave them; their leases expire and they return to the queue.
      if (this.stopped) return;
      for (const run of runs) this.track(run); // the store's `changed` tells their event streams
    }
  }

  /** Models whose first provider was full a moment ago: their runs wait in the queue. */
  private waitingModels(now: number): ModelSlug[] {
    return this.deps.catalog.current.models
      .filter(({ routes: [first] }) => first !== undefined && (this.fullUntil.get(first.slot) ?? 0) > now)
      .map(({ model }) => model.slug);
  }

  /**
   * Models whose runs may download references here: a route's provider reads them. (Some of their
   * runs download nothing, having no references or running in the sandbox; they wait with the rest.)
   */
  private downloadingModels(): ModelSlug[] {
    return this.deps.catalog.current.models
      .filter(({ routes }) => routes.some((route) => route.provider.usesReferences))
      .map(({ model }) => model.slug);
  }

  private track(run: RunRecord): void {
    const controller = new AbortController();
    this.active.set(run.id, controller);
    this.slots.claimed(run);
    this.deps.metrics.workerTook();
    const done = this.attempt(run, controller)
      .catch((err) => this.deps.logger.error({ err, runId: run.id }, "run processing failed"))
      .finally(() => {
        this.active.delete(run.id);
        this.slots.let(run.id);
        this.deps.metrics.workerLet(run.id);
        this.finished.delete(done);
        void this.polling.trigger();
      });
    this.finished.add(done);
  }

  private async attempt(run: RunRecord, controller: AbortController): Promise<void> {
    const { deps } = this;
    const handBack = await attemptRun(deps, run, controller, {
      workerId: this.options.workerId,
      leaseMs: this.leaseMs,
      downloads: this.slots.gateFor(run.id, controller.signal),
    });
    if (!handBack) {
      // The run ended and may have freed a provider's slot: no model's runs wait out the pause.
      this.fullUntil.clear();
      return;
    }
    const now = deps.clock.now().getTime();
    if (handBack instanceof StorageFullStop) {
      // Every run here would hit the same disk: claim none for a while, and let other processes
      // (another machine's disk) take this one meanwhile. Its deadline still holds.
      this.pausedUntil = now + STORAGE_FULL_PAUSE_MS;
    } else if (handBack instanceof ProviderFull) {
      // Back in the queue, untouched, until the provider has a free slot; other models go on.
      this.fullUntil.set(handBack.provider, now + (this.options.pollMs ?? DEFAULT_POLL_MS));
    }
    // (A run without a download slot waits until one frees: the claim skips it until then.)
    await deps.store.releaseRun({ runId: run.id, workerId: this.options.workerId }).catch(() => {});
    if (handBack instanceof ProviderFull) {
      deps.logger.info(
        { runId: run.id, provider: handBack.provider },
        "provider is full; the run waits in the queue",
      );
    } else if (!(handBack instanceof StorageFullStop)) {
      deps.logger.info(
        { runId: run.id, organizationId: handBack.organizationId },
        "no download slot is free to the run's organization; the run waits in the queue",
      );
    }
  }
}
