/**
 * Deletes generated videos older than REFVID_FILE_RETENTION_HOURS, and reference uploads (record,
 * then bytes) once they expire. An upload expires when its record says, fixed when it was made:
 * lowering REFVID_UPLOAD_TTL_HOURS later shortens no upload already made. Runs keep their output,
 * and a download answers `404 file_not_found`, which says outputs are kept for a limited time.
 */
import type { Store } from "@refvid/store";
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import { PeriodicTask } from "../periodic-task.js";
import type { BlobStore } from "./blob-store.js";

/** The longest REFVID_UPLOAD_TTL_HOURS allowed: no upload's record outlives it. */
export const MAX_UPLOAD_TTL_HOURS = 24 * 366;

/** Expired uploads whose bytes are deleted at once (each a request on S3). */
const DELETES_AT_ONCE = 16;

/** What the sweep reads and deletes with (the app's dependencies have all of it). */
export interface RetentionDeps {
  blobs: Pick<BlobStore, "delete" | "deleteOlderThan">;
  store: Pick<Store, "deleteExpiredUploads">;
  clock: Clock;
  scheduler: Scheduler;
  logger: Logger;
  /** REFVID_FILE_RETENTION_HOURS. */
  config: { fileRetentionHours: number };
}

export class RetentionSweep {
  private readonly task: PeriodicTask;

  constructor(
    private readonly deps: RetentionDeps,
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
    const byAge = async (kind: "file" | "upload", before: Date) => {
      try {
        const count = await deps.blobs.deleteOlderThan(kind, before);
        if (count > 0) deps.logger.info({ kind, deleted: count, before }, "expired files deleted");
        deleted += count;
      } catch (err) {
        deps.logger.error({ err, kind }, "file retention sweep failed");
      }
    };
    await byAge("file", ago(deps.config.fileRetentionHours));
    // Uploads by their records' own expiry: the record goes first, so an upload is never usable
    // without its bytes; bytes whose record is gone (a sweep cut off between the two) are left
    // for the backstop below.
    const expired = await deps.store.deleteExpiredUploads(now).catch((err: unknown) => {
      deps.logger.error({ err }, "could not forget expired uploads");
      return [];
    });
    let uploads = 0;
    for (let i = 0; i < expired.length; i += DELETES_AT_ONCE) {
      const ids = expired.slice(i, i + DELETES_AT_ONCE);
      const results = await Promise.allSettled(ids.map((id) => deps.blobs.delete(id)));
      results.forEach((result, j) => {
        if (result.status === "fulfilled") uploads++;
        else
          deps.logger.error({ err: result.reason, id: ids[j] }, "could not delete an expired upload's bytes");
      });
    }
    if (uploads > 0) deps.logger.info({ kind: "upload", deleted: uploads }, "expired files deleted");
    deleted += uploads;
    // Backstop: upload bytes older than any upload can live have no record left.
    await byAge("upload", ago(MAX_UPLOAD_TTL_HOURS + 1));
    return deleted;
  }
}
