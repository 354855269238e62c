/**
 * Ends runs whose time ran out while queued (no worker took them) and recovers runs whose worker
 * died (their lease expired): those go back to the queue, or fail after `maxAttempts` claims.
 */
import { type RunError, runErrors, statusOfRunError } from "@refvid/core";
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
      maxAttempts: this.options.maxAttempts ?? 3,
      limit: 100,
    });
    for (const run of exhausted) {
      await this.end(run.id, runErrors.internal("The run's worker stopped repeatedly; it was not charged."));
    }
  }

  private async end(runId: string, error: RunError) {
    await this.deps.store.completeRun({
      runId,
      outcome: { status: statusOfRunError(error.type), error },
      now: this.deps.clock.now(),
    });
  }
}
