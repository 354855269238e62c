/**
 * Deletes generated videos older than REFVID_FILE_RETENTION_HOURS. Their runs keep their output,
 * and a download answers `404 file_not_found`, which says outputs are kept for a limited time.
 */
import type { AppDeps } from "../deps.js";
import { PeriodicTask } from "../periodic-task.js";

export class RetentionSweep {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: AppDeps,
    intervalMs = 10 * 60_000,
  ) {
    this.task = new PeriodicTask({
      intervalMs,
      scheduler: deps.scheduler,
      logger: deps.logger,
      failureMessage: "file retention sweep failed",
      step: async () => {
        await this.sweep();
      },
    });
  }

  /** Sweeps now, then every interval. */
  start(): void {
    this.task.start({ immediately: true });
  }

  /** Stops sweeping; waits for a sweep in progress. */
  stop(): Promise<void> {
    return this.task.stop();
  }

  async sweep(): Promise<number> {
    const { deps } = this;
    const before = new Date(deps.clock.now().getTime() - deps.config.fileRetentionHours * 3_600_000);
    try {
      const deleted = await deps.blobs.deleteOlderThan(before);
      if (deleted > 0) deps.logger.info({ deleted, before }, "expired files deleted");
      return deleted;
    } catch (err) {
      deps.logger.error({ err }, "file retention sweep failed");
      return 0;
    }
  }
}
