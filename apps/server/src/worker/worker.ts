/**
 * The worker: claims queued runs under a lease, calls the model's providers (resuming a vendor
 * job a previous worker recorded, falling back to the next route when a vendor never took the
 * job), stores the video, and ends every run exactly once through `completeRun`, which
 * settles billing, frees the slots and enqueues the webhook together. A run still unfinished
 * after REFVID_RUN_TIMEOUT_MS from admission ends as `timeout`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chargeFor, MODEL_SLUGS, type ModelInput, type ModelSlug, normalizeInput } from "@refvid/core";
import type { CompleteResult, RunOutcome, RunRecord } from "@refvid/store";
import type { Logger } from "pino";
import { sleep } from "../clock.js";
import type { AppDeps } from "../deps.js";
import { newFileId } from "../ids.js";
import { PeriodicTask } from "../periodic-task.js";
import type { ProviderRoute } from "../providers/registry.js";
import { ProviderError, type ProviderResult } from "../providers/types.js";
import { VendorError } from "../providers/upstream/vendor-http.js";
import { isConnectionLost } from "../services/store-errors.js";
import { progressReporter } from "./progress.js";
import { providerJob } from "./provider-job.js";
import {
  outcomeOfError,
  ProviderFull,
  RunStopped,
  type StopCause,
  stopCauseOf,
  stopReason,
} from "./stops.js";

export interface WorkerOptions {
  workerId: string;
  concurrency: number;
  leaseMs?: number;
  pollMs?: number;
}

/** Waits before each new try at ending a run while the store's connection is lost. */
const COMPLETE_RETRY_DELAYS_MS = [100, 200, 400, 800, 1600];

export class Worker {
  private readonly active = new Map<string, AbortController>();
  private readonly leaseMs: number;
  private readonly polling: PeriodicTask;
  private stopped = false;
  private offQueued: () => void = () => {};
  private readonly finished = new Set<Promise<void>>();
  /** Providers found full, and until when their models' runs are left in the queue. */
  private readonly fullUntil = new Map<string, number>();

  constructor(
    private readonly deps: AppDeps,
    private readonly options: WorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.polling = new PeriodicTask({
      intervalMs: options.pollMs ?? 1000,
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

  /**
   * Stops claiming and waits up to `graceMs` for the runs in hand, then aborts them and leaves them
   * to their leases: the sweeper puts them back in the queue.
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    this.offQueued();
    await this.polling.stop();
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
      const free = this.options.concurrency - this.active.size;
      if (free <= 0) return;
      const now = this.deps.clock.now();
      const runs = await this.deps.store.claimRuns({
        workerId: this.options.workerId,
        limit: free,
        leaseMs: this.leaseMs,
        now,
        skipEndpoints: this.waitingModels(now.getTime()),
      });
      if (runs.length === 0) return;
      // Claimed while stopping: leave them; their leases expire and they return to the queue.
      if (this.stopped) return;
      for (const run of runs) {
        this.deps.events.runChanged(run.id); // its event streams say it started
        this.track(run);
      }
    }
  }

  /** Models whose first provider was full a moment ago: their runs wait in the queue. */
  private waitingModels(now: number): ModelSlug[] {
    return MODEL_SLUGS.filter((slug) => {
      const first = this.deps.routes[slug][0];
      return first !== undefined && (this.fullUntil.get(first.name) ?? 0) > now;
    });
  }

  private track(run: RunRecord): void {
    const controller = new AbortController();
    this.active.set(run.id, controller);
    this.deps.metrics.workerTook();
    const done = this.process(run, controller)
      .catch((err) => this.deps.logger.error({ err, runId: run.id }, "run processing failed"))
      .finally(() => {
        this.active.delete(run.id);
        this.deps.metrics.workerLet(run.id);
        this.finished.delete(done);
        void this.polling.trigger();
      });
    this.finished.add(done);
  }

  private async process(run: RunRecord, controller: AbortController): Promise<void> {
    const { deps } = this;
    const log = deps.logger.child({ runId: run.id });
    const stop = (cause: StopCause) => {
      if (!controller.signal.aborted) controller.abort(stopReason(cause));
    };
    const deadline = run.createdAt.getTime() + deps.config.runTimeoutMs;
    const cancelTimeout = deps.scheduler.setTimeout(
      () => stop("timeout"),
      deadline - deps.clock.now().getTime(),
    );
    const offCancel = deps.events.onCancelRequested(run.id, () => stop("cancelled"));
    const heartbeat = new PeriodicTask({
      intervalMs: this.leaseMs / 3,
      scheduler: deps.scheduler,
      logger: log,
      failureMessage: "renewing the lease failed",
      step: async () => {
        const lease = {
          runId: run.id,
          workerId: this.options.workerId,
          leaseMs: this.leaseMs,
          now: deps.clock.now(),
        };
        // A failed renewal is tried again at the next beat; the lease outlasts two misses.
        const mine = await deps.store.renewLease(lease).catch(() => true);
        if (!mine) stop("lease_lost"); // cancelled, timed out or reclaimed elsewhere
      },
    });
    heartbeat.start();

    let outcome: RunOutcome | null;
    let full: ProviderFull | undefined;
    let workDir: string | undefined;
    try {
      workDir = await mkdtemp(join(tmpdir(), "refvid-run-"));
      outcome = await this.generate(run, workDir, controller.signal, { deadline, log });
    } catch (err) {
      full = err instanceof ProviderFull ? err : undefined;
      outcome = full ? null : outcomeOfError(err, stopCauseOf(controller.signal), deps.config.runTimeoutMs);
      if (
        outcome?.status === "failed" &&
        outcome.error.type === "internal_error" &&
        !controller.signal.aborted
      ) {
        log.error({ err }, "run failed unexpectedly");
      }
    } finally {
      cancelTimeout();
      offCancel();
      await heartbeat.stop();
      if (workDir) await rm(workDir, { recursive: true, force: true }).catch(() => {});
    }
    if (full) {
      // Back in the queue, untouched, until the provider has a free slot; other models go on.
      this.fullUntil.set(full.provider, deps.clock.now().getTime() + (this.options.pollMs ?? 1000));
      await deps.store.releaseRun({ runId: run.id, workerId: this.options.workerId }).catch(() => {});
      log.info({ provider: full.provider }, "provider is full; the run waits in the queue");
      return;
    }
    // Shutting down: leave the run; its lease expires and the sweeper puts it back in the queue.
    if (outcome === null) return;
    try {
      const result = await this.complete(run.id, outcome);
      // An earlier try that lost its connection may have ended the run with this very outcome.
      const ours =
        result.kind === "completed" ||
        (result.kind === "already_terminal" &&
          outcome.status === "succeeded" &&
          result.run.output?.fileId === outcome.output.fileId);
      if (ours) {
        log.info({ status: result.run.status, charged: result.run.charged }, "run ended");
        deps.events.runEnded(run.id);
      } else if (outcome.status === "succeeded") {
        // Cancelled, timed out or taken over meanwhile: this video is not delivered.
        await deps.blobs.delete(outcome.output.fileId);
      }
    } catch (err) {
      log.error(
        { err },
        "could not record the run's end; the sweeper will take it up when the lease expires",
      );
    }
  }

  /**
   * Ends the run, trying again while the store's connection is lost: `completeRun` ends a run
   * exactly once, so a try whose commit went through answers `already_terminal` the next time.
   */
  private async complete(runId: string, outcome: RunOutcome): Promise<CompleteResult> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.deps.store.completeRun({
          runId,
          outcome,
          now: this.deps.clock.now(),
          leaseOwner: this.options.workerId,
        });
      } catch (err) {
        const delay = COMPLETE_RETRY_DELAYS_MS[attempt];
        if (!isConnectionLost(err) || delay === undefined) throw err;
        this.deps.logger.warn({ err, runId }, "store connection lost while ending a run; trying again");
        await sleep(this.deps.scheduler, delay);
      }
    }
  }

  /**
   * Calls the model's providers in route order and stores the video; the charge uses the run's own
   * price. A run whose vendor job was already recorded resumes that job on its provider. The next
   * route is tried only when a vendor never accepted the job.
   */
  private async generate(
    run: RunRecord,
    workDir: string,
    signal: AbortSignal,
    { deadline, log }: { deadline: number; log: Logger },
  ): Promise<RunOutcome> {
    const { deps } = this;
    const request = normalizeInput(run.endpoint, run.input as ModelInput);
    // A test run never reaches a model vendor: a model routed to one runs on the simulated
    // provider instead (docs/decisions.md, "Test keys").
    const configured = deps.routes[run.endpoint];
    const sandboxed = run.environment === "test" && configured.some((route) => route.vendor);
    const routes: ProviderRoute[] = sandboxed
      ? [{ name: "simulated", provider: deps.sandbox, vendor: false }]
      : configured;
    const resumeAt = run.upstream ? routes.findIndex((route) => route.name === run.upstream?.provider) : -1;
    const onProgress = progressReporter(deps, run.id);
    let result: ProviderResult | undefined;
    for (let i = Math.max(resumeAt, 0); i < routes.length && !result; i++) {
      const route = routes[i] as ProviderRoute;
      const upstream = i === resumeAt ? run.upstream : null;
      let accepted = upstream !== null;
      if (upstream) log.info({ provider: route.name, upstreamId: upstream.id }, "resuming the vendor job");
      if (
        route.maxConcurrency !== undefined &&
        !(await deps.store.acquireProvider({
          runId: run.id,
          workerId: this.options.workerId,
          provider: route.name,
          limit: route.maxConcurrency,
        }))
      ) {
        throw new ProviderFull(route.name);
      }
      const job = await providerJob(deps, run, route, { request, workDir, signal });
      const called = deps.metrics.providerCall(run.id, route.name);
      try {
        result = await route.provider.run(job, {
          signal,
          onProgress,
          deadline,
          upstream,
          recordUpstream: async (upstreamJob) => {
            accepted = true;
            const kept = await deps.store.recordUpstream({
              runId: run.id,
              workerId: this.options.workerId,
              upstream: upstreamJob,
            });
            log.info({ provider: route.name, upstreamId: upstreamJob.id }, "vendor accepted the run");
            // Another worker holds the run now and cannot know of this job: the provider, seeing
            // the failed record, cancels it.
            if (!kept) throw new RunStopped("lease_lost");
          },
        });
        called("succeeded");
      } catch (err) {
        called(signal.aborted || err instanceof RunStopped ? "stopped" : "failed");
        const next = routes[i + 1];
        if (signal.aborted || !(err instanceof VendorError) || accepted || !next) throw err;
        log.warn(
          { provider: route.name, next: next.name, err: err.message },
          "vendor did not take the run; trying the next route",
        );
      }
    }
    if (signal.aborted) throw signal.reason;
    if (!result) throw new ProviderError("No provider is configured for this model.");
    if (!(Number.isFinite(result.durationSeconds) && result.durationSeconds > 0)) {
      throw new ProviderError(
        `The provider returned a video without a valid duration (${result.durationSeconds}).`,
      );
    }
    const fileId = newFileId();
    await deps.blobs.put(fileId, result.path);
    const reserved = {
      unitPrice: run.unitPrice,
      billableSeconds: run.reservedSeconds,
      amount: run.reserved,
      tier: "",
    };
    const charge = chargeFor(reserved, result.durationSeconds);
    return {
      status: "succeeded",
      output: {
        fileId,
        fileName: `${run.id}.mp4`,
        contentType: "video/mp4",
        durationSeconds: result.durationSeconds,
      },
      billableSeconds: charge.billableSeconds,
      charged: charge.amount,
    };
  }
}
