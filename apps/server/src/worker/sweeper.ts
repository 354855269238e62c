/**
 * Ends runs whose time ran out while queued (no worker took them) and recovers runs whose worker
 * died (their lease expired): those go back to the queue, or fail after `maxAttempts` claims.
 */
import type { RunOutcome } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { timeoutError } from "./worker.js";

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
      await this.end(run.id, { status: "timeout", error: timeoutError(deps.config.runTimeoutMs) });
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
