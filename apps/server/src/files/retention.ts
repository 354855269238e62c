/**
 * Deletes generated videos older than REFVID_FILE_RETENTION_HOURS. Their runs keep their output,
 * and a download answers `404 file_not_found`, which says outputs are kept for a limited time.
 */
import type { AppDeps } from "../deps.js";

export class RetentionSweep {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly deps: AppDeps,
    private readonly intervalMs = 10 * 60_000,
  ) {}

  start(): void {
    void this.sweep();
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
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
