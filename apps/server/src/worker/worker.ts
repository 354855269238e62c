/**
 * The worker (DESIGN.md, "Data flow"): claims queued runs under a lease, calls the model's
 * provider, stores the video, and ends every run exactly once through `completeRun`, which
 * settles billing, frees the slots and enqueues the webhook together. A run still unfinished
 * after REFVID_RUN_TIMEOUT_MS from admission ends as `timeout`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chargeFor, type ModelInput, normalizeInput, priceRequest } from "@refvid/core";
import type { RunOutcome, RunRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { newFileId } from "../ids.js";
import { ProviderError } from "../providers/types.js";

export interface WorkerOptions {
  workerId: string;
  concurrency: number;
  leaseMs?: number;
  pollMs?: number;
}

const TIMEOUT_ERROR = (ms: number) => ({
  type: "timeout",
  code: 504,
  message: `The run did not finish within ${Math.round(ms / 1000)} s.`,
});

export class Worker {
  private readonly active = new Map<string, AbortController>();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private polling = false;
  private offQueued: () => void = () => {};
  private readonly finished = new Set<Promise<void>>();

  constructor(
    private readonly deps: AppDeps,
    private readonly options: WorkerOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1000;
  }

  start(): void {
    this.offQueued = this.deps.events.on("queued", () => void this.poll());
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    void this.poll();
  }

  /** Stops claiming, aborts nothing: waits for the runs in hand up to `graceMs`, then aborts them. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.offQueued();
    const all = Promise.all(this.finished);
    const grace = new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    await Promise.race([all, grace]);
    for (const controller of this.active.values()) controller.abort(new Error("worker shutting down"));
    await all;
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      while (!this.stopped) {
        const free = this.options.concurrency - this.active.size;
        if (free <= 0) return;
        const runs = await this.deps.store.claimRuns({
          workerId: this.options.workerId,
          limit: free,
          leaseMs: this.leaseMs,
          now: this.deps.clock.now(),
        });
        if (runs.length === 0) return;
        for (const run of runs) this.track(run);
      }
    } catch (err) {
      this.deps.logger.error({ err }, "claiming runs failed");
    } finally {
      this.polling = false;
    }
  }

  private track(run: RunRecord): void {
    const controller = new AbortController();
    this.active.set(run.id, controller);
    const done = this.process(run, controller).finally(() => {
      this.active.delete(run.id);
      this.finished.delete(done);
      void this.poll();
    });
    this.finished.add(done);
  }

  private async process(run: RunRecord, controller: AbortController): Promise<void> {
    const { deps } = this;
    const log = deps.logger.child({ runId: run.id });
    const timeoutMs = deps.config.runTimeoutMs;
    const deadline = run.createdAt.getTime() + timeoutMs;
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        controller.abort(new Error("timeout"));
      },
      Math.max(0, deadline - deps.clock.now().getTime()),
    );
    const offCancel = deps.events.onCancelRequested(run.id, () => controller.abort(new Error("cancelled")));
    const heartbeat = setInterval(async () => {
      const mine = await deps.store
        .renewLease({
          runId: run.id,
          workerId: this.options.workerId,
          leaseMs: this.leaseMs,
          now: deps.clock.now(),
        })
        .catch(() => true);
      if (!mine) controller.abort(new Error("lease lost")); // cancelled, timed out or reclaimed elsewhere
    }, this.leaseMs / 3);
    const workDir = await mkdtemp(join(tmpdir(), "refvid-run-"));
    let lastProgress = 0;
    let outcome: RunOutcome;
    try {
      const request = normalizeInput(run.endpoint, run.input as ModelInput);
      const result = await deps.providers[run.endpoint].run(
        { runId: run.id, request, input: run.input, workDir },
        {
          signal: controller.signal,
          onProgress: (fraction) => {
            if (fraction - lastProgress < 0.05) return;
            lastProgress = fraction;
            void deps.store.setProgress(run.id, Math.round(fraction * 100) / 100).catch(() => {});
          },
        },
      );
      if (controller.signal.aborted) throw controller.signal.reason;
      const fileId = newFileId();
      await deps.blobs.put(fileId, result.path);
      const charge = chargeFor(priceRequest(request), result.durationSeconds);
      outcome = {
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
    } catch (err) {
      if (timedOut) outcome = { status: "timeout", error: TIMEOUT_ERROR(timeoutMs) };
      else if (err instanceof ProviderError)
        outcome = { status: "failed", error: { type: err.type, code: err.code, message: err.message } };
      else if (controller.signal.aborted)
        outcome = {
          status: "failed",
          error: { type: "internal_error", code: 500, message: "The run was interrupted." },
        };
      else {
        log.error({ err }, "run failed unexpectedly");
        outcome = {
          status: "failed",
          error: {
            type: "internal_error",
            code: 500,
            message: "The run failed on our side; it was not charged.",
          },
        };
      }
    } finally {
      clearTimeout(timer);
      clearInterval(heartbeat);
      offCancel();
      await rm(workDir, { recursive: true, force: true });
    }
    const result = await deps.store.completeRun({ runId: run.id, outcome, now: deps.clock.now() });
    if (result.kind === "completed") {
      log.info({ status: result.run.status, charged: result.run.charged }, "run ended");
      deps.events.runEnded(run.id);
    } else if (outcome.status === "succeeded" && outcome.output) {
      // Cancelled or timed out meanwhile: the video is not delivered.
      await deps.blobs.delete(outcome.output.fileId);
    }
  }
}

/**
 * Ends runs whose time ran out while queued (no worker took them) and runs whose worker died
 * (their lease expired): the latter go back to the queue, or fail after `maxAttempts`.
 */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: AppDeps,
    private readonly options: { intervalMs?: number; maxAttempts?: number } = {},
  ) {}

  start(): void {
    this.timer = setInterval(
      () => void this.sweep().catch((err) => this.deps.logger.error({ err }, "sweep failed")),
      this.options.intervalMs ?? 1000,
    );
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<void> {
    const { deps } = this;
    const now = deps.clock.now();
    const overdue = await deps.store.findOverdueRuns({
      createdBefore: new Date(now.getTime() - deps.config.runTimeoutMs),
      limit: 100,
    });
    for (const run of overdue)
      await this.end(run.id, { status: "timeout", error: TIMEOUT_ERROR(deps.config.runTimeoutMs) });
    const { requeued, exhausted } = await deps.store.requeueExpiredLeases({
      now,
      maxAttempts: this.options.maxAttempts ?? 3,
      limit: 100,
    });
    for (const run of exhausted) {
      await this.end(run.id, {
        status: "failed",
        error: {
          type: "internal_error",
          code: 500,
          message: "The run's worker stopped repeatedly; it was not charged.",
        },
      });
    }
    if (requeued.length > 0) deps.events.runQueued();
  }

  private async end(runId: string, outcome: RunOutcome) {
    const result = await this.deps.store.completeRun({ runId, outcome, now: this.deps.clock.now() });
    if (result.kind === "completed") {
      this.deps.events.cancelRequested(runId); // stops a local worker still on it
      this.deps.events.runEnded(runId);
    }
  }
}
