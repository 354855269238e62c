/**
 * A succeeded run's poster frame and sprite sheet (docs/decisions.md, "Posters and sprite
 * sheets"): rendered from the video in the run's work directory, stored as `file_…` blobs beside
 * it. They are extras: any failure leaves the run delivered without them, except a full disk or
 * the run's own stop, which stop the run as they would while storing its video.
 */
import { join } from "node:path";
import type { RunOutputFile } from "@refvid/store";
import type { Logger } from "pino";
import type { BlobStore } from "../files/blob-store.js";
import { newFileId } from "../ids.js";
import { renderPoster, renderSpriteSheet } from "../media/poster.js";
import { storageFullOf } from "../storage-full.js";

/** How long each rendering may take: a poster decodes a second of video, a sprite sheet all of it. */
const RENDER_TIMEOUT_MS = 60_000;
/**
 * Time kept back before the run's deadline for storing the video and ending the run: previews
 * that would run into it are cut short (or not begun), so they never turn a made video into a
 * timed-out run.
 */
export const PREVIEW_RESERVE_MS = 10_000;
/** Less time than this left for both renders: none is begun. */
const LEAST_RENDER_MS = 1_000;

/** Paths of the rendered JPEGs, before they are stored. */
export interface RenderedPreviews {
  poster: string;
  spritesheet: string;
}

/** The output fields that name the stored previews. */
export type PreviewIds = Pick<RunOutputFile, "thumbnailFileId" | "spritesheetFileId">;

/** What stops the run rather than only its previews: a full disk, or the run's signal. */
const stopsTheRun = (err: unknown, signal: AbortSignal) => signal.aborted || storageFullOf(err) !== null;

/**
 * Renders both previews of `video` into `workDir`; null (and a warning) when either fails.
 * Must run before the video is stored: storing moves the file away.
 */
export async function renderPreviews(
  video: string,
  durationSeconds: number,
  {
    workDir,
    signal,
    log,
    timeLeftMs,
  }: { workDir: string; signal: AbortSignal; log: Logger; timeLeftMs: number },
): Promise<RenderedPreviews | null> {
  const rendered = {
    poster: join(workDir, "refvid-poster.jpg"),
    spritesheet: join(workDir, "refvid-sprites.jpg"),
  };
  // Each render gets half of what is left before the reserve, at most its own limit.
  const budget = Math.min(RENDER_TIMEOUT_MS, Math.floor((timeLeftMs - PREVIEW_RESERVE_MS) / 2));
  if (budget < LEAST_RENDER_MS) {
    log.warn(
      { timeLeftMs },
      "too close to the run's deadline to render its poster and sprite sheet; the video goes without them",
    );
    return null;
  }
  const options = { timeoutMs: budget, signal };
  try {
    // One after the other: the machine's cores are the runs' too.
    await renderPoster(video, rendered.poster, durationSeconds, options);
    await renderSpriteSheet(video, rendered.spritesheet, durationSeconds, options);
    return rendered;
  } catch (err) {
    if (stopsTheRun(err, signal)) throw err;
    log.warn({ err }, "could not render the run's poster and sprite sheet; the video goes without them");
    return null;
  }
}

/**
 * Stores the rendered previews as new `file_…` blobs (the retention sweep ages them out with the
 * video). Nothing is kept unless both are: a failure deletes what was stored, then throws when it
 * stops the run and otherwise warns and answers no ids.
 */
export async function storePreviews(
  blobs: BlobStore,
  rendered: RenderedPreviews | null,
  { signal, log }: { signal: AbortSignal; log: Logger },
): Promise<PreviewIds> {
  if (!rendered) return {};
  const ids = { thumbnailFileId: newFileId(), spritesheetFileId: newFileId() };
  try {
    await blobs.put(ids.thumbnailFileId, rendered.poster, { contentType: "image/jpeg" });
    await blobs.put(ids.spritesheetFileId, rendered.spritesheet, { contentType: "image/jpeg" });
    return ids;
  } catch (err) {
    await deletePreviews(blobs, ids);
    if (stopsTheRun(err, signal)) throw err;
    log.warn({ err }, "could not store the run's poster and sprite sheet; the video goes without them");
    return {};
  }
}

/** Deletes a run's stored previews, if any (a run whose end was not this worker's). */
export async function deletePreviews(blobs: BlobStore, ids: PreviewIds): Promise<void> {
  const stored = [ids.thumbnailFileId, ids.spritesheetFileId].filter((id) => id !== undefined);
  await Promise.all(stored.map((id) => blobs.delete(id).catch(() => {})));
}
