/**
 * Deletes generated videos older than REFVID_FILE_RETENTION_HOURS, and reference uploads (bytes
 * and records) once they expire (REFVID_UPLOAD_TTL_HOURS). Runs keep their output, and a download
 * answers `404 file_not_found`, which says outputs are kept for a limited time.
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

  /** Returns how many blobs it deleted. */
  async sweep(): Promise<number> {
    const { deps } = this;
    const now = deps.clock.now();
    const ago = (hours: number) => new Date(now.getTime() - hours * 3_600_000);
    let deleted = 0;
    for (const [kind, before] of [
      ["file", ago(deps.config.fileRetentionHours)],
      ["upload", ago(deps.config.uploadTtlHours)],
    ] as const) {
      try {
        const count = await deps.blobs.deleteOlderThan(kind, before);
        if (count > 0) deps.logger.info({ kind, deleted: count, before }, "expired files deleted");
        deleted += count;
      } catch (err) {
        deps.logger.error({ err, kind }, "file retention sweep failed");
      }
    }
    // An upload's bytes go by their age above; its record by its own expiry.
    await deps.store.deleteExpiredUploads(now).catch((err: unknown) => {
      deps.logger.error({ err }, "could not forget expired uploads");
    });
    return deleted;
  }
}
