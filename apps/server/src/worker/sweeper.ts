/**
 * Ends runs whose time ran out while queued (no worker took them) and recovers runs whose worker
 * died (their lease expired): those go back to the queue, or fail after `maxAttempts` claims. A
 * run it ends that has a vendor job recorded gets that job cancelled: its worker may be gone, and
 * the vendor would otherwise run (and bill) the job to its end. A live worker cancels it too; a
 * second cancel of a job is harmless.
 */
import { type RunError, runErrors, statusOfRunError } from "@refvid/core";
import type { RunRecord, UpstreamRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { PeriodicTask } from "../periodic-task.js";

export class Sweeper {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: AppDeps,
    private readonly options: { intervalMs?: number; maxAttempts?: number } = {},
  ) {
    this.task = new PeriodicTask({
      intervalMs: options.intervalMs ?? 1000,
      scheduler: deps.scheduler,
      logger: deps.logger,
      failureMessage: "sweep failed",
      step: () => this.sweep(),
    });
  }

  start(): void {
    this.task.start();
  }

  /** Stops sweeping; waits for a sweep in progress. */
  stop(): Promise<void> {
    return this.task.stop();
  }

  async sweep(): Promise<void> {
    const { deps } = this;
    const now = deps.clock.now();
    const overdue = await deps.store.findOverdueRuns({
      createdBefore: new Date(now.getTime() - deps.config.runTimeoutMs),
      limit: 100,
    });
    for (const run of overdue) await this.end(run.id, runErrors.timeout(deps.config.runTimeoutMs));
    // The store announces the runs requeued (`queued`) and ended (`ended`, which stops local work).
    const { exhausted } = await deps.store.requeueExpiredLeases({
      now,
      maxAttempts: this.options.maxAttempts ?? deps.config.workerMaxAttempts,
      limit: 100,
    });
    for (const run of exhausted) {
      await this.end(run.id, runErrors.internal("The run's worker stopped repeatedly; it was not charged."));
    }
  }

  private async end(runId: string, error: RunError) {
    const ended = await this.deps.store.completeRun({
      runId,
      outcome: { status: statusOfRunError(error.type), error },
      now: this.deps.clock.now(),
    });
    if (ended.kind === "completed" && ended.run.upstream) {
      await this.cancelUpstream(ended.run, ended.run.upstream);
    }
  }

  /** The vendor job of a run the sweeper ended, cancelled on the route that recorded it. */
  private async cancelUpstream(run: RunRecord, upstream: UpstreamRecord): Promise<void> {
    const route = this.deps.catalog.route(run.endpoint, upstream.provider);
    const log = this.deps.logger.child({ runId: run.id, upstreamId: upstream.id });
    if (!route?.provider.cancelUpstream) {
      log.warn({ route: upstream.provider }, "no route here can cancel the run's vendor job");
      return;
    }
    try {
      await route.provider.cancelUpstream(upstream);
    } catch (err) {
      log.warn({ err }, "could not cancel the vendor job of a run the sweeper ended");
    }
  }
}
