/**
 * One worker's attempt at one run: the run's deadline, its cancel and the lease heartbeat around the
 * route plan's providers (`callRoutes`), then the video stored, the charge for its length, and the
 * end recorded through `completeRun` (which settles billing, frees the slots and enqueues the
 * webhook together), tried again while the store's connection is lost. A run still unfinished
 * after REFVID_RUN_TIMEOUT_MS from admission ends as `timeout`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { amountFor, chargeForRun, priceTierFor } from "@refvid/core";
import { type CompleteResult, isConnectionLost, type RunOutcome, type RunRecord } from "@refvid/store";
import type { Logger } from "pino";
import { sleep } from "../clock.js";
import type { AppDeps } from "../deps.js";
import { newFileId } from "../ids.js";
import { PeriodicTask } from "../periodic-task.js";
import { ProviderError } from "../providers/types.js";
import { storageFullOf } from "../storage-full.js";
import { deletePreviews, renderPreviews, storePreviews } from "./previews.js";
import { callRoutes } from "./route-plan.js";
import { type DownloadGate, DownloadsFull } from "./slots.js";
import {
  type HandBack,
  outcomeOfError,
  ProviderFull,
  type StopCause,
  StorageFullStop,
  stopCauseOf,
  stopReason,
} from "./stops.js";

export interface AttemptOptions {
  workerId: string;
  leaseMs: number;
  /** The worker's download slots, where the run's references are downloaded (slots.ts). */
  downloads?: DownloadGate;
}

/** Waits before each new try at ending a run while the store's connection is lost. */
const COMPLETE_RETRY_DELAYS_MS = [100, 200, 400, 800, 1600];

/**
 * Works on a claimed run until it ends, or until `controller` aborts it (a shutdown leaves the run
 * to its lease). Resolves with why the attempt gave the run back when it did (its provider was
 * full, the download slots were taken, or the disk was full): the run is then untouched, for the
 * claim loop to put back in the queue.
 */
export async function attemptRun(
  deps: AppDeps,
  run: RunRecord,
  controller: AbortController,
  options: AttemptOptions,
): Promise<HandBack | DownloadsFull | null> {
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
    intervalMs: options.leaseMs / 3,
    scheduler: deps.scheduler,
    logger: log,
    failureMessage: "renewing the lease failed",
    step: async () => {
      const lease = {
        runId: run.id,
        workerId: options.workerId,
        leaseMs: options.leaseMs,
        now: deps.clock.now(),
      };
      // A failed renewal is tried again at the next beat; the lease outlasts two misses.
      const mine = await deps.store.renewLease(lease).catch(() => true);
      if (!mine) stop("lease_lost"); // cancelled, timed out or reclaimed elsewhere
    },
  });
  heartbeat.start();

  let outcome: RunOutcome | null;
  let workDir: string | undefined;
  try {
    workDir = await mkdtemp(join(tmpdir(), "refvid-run-"));
    outcome = await generate(deps, run, workDir, controller.signal, {
      deadline,
      log,
      workerId: options.workerId,
      downloads: options.downloads,
    });
  } catch (err) {
    if (err instanceof ProviderFull || err instanceof DownloadsFull) return err;
    const full = controller.signal.aborted ? null : storageFullOf(err);
    if (full) {
      log.error({ code: full.code, path: full.path }, "the disk is full; the run goes back to the queue");
      return new StorageFullStop(full);
    }
    outcome = outcomeOfError(err, stopCauseOf(controller.signal), deps.config.runTimeoutMs);
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
  // Shutting down: leave the run; its lease expires and the sweeper puts it back in the queue.
  if (outcome === null) return null;
  try {
    const result = await complete(deps, run.id, outcome, options.workerId);
    // An earlier try that lost its connection may have ended the run with this very outcome.
    const ours =
      result.kind === "completed" ||
      (result.kind === "already_terminal" &&
        outcome.status === "succeeded" &&
        result.run.output?.fileId === outcome.output.fileId);
    if (ours) {
      log.info({ status: result.run.status, charged: result.run.charged }, "run ended");
    } else if (outcome.status === "succeeded") {
      // Cancelled, timed out or taken over meanwhile: this video is not delivered.
      await deletePreviews(deps.blobs, outcome.output);
      await deps.blobs.delete(outcome.output.fileId);
    }
  } catch (err) {
    log.error({ err }, "could not record the run's end; the sweeper will take it up when the lease expires");
  }
  return null;
}

/**
 * Ends the run, trying again while the store's connection is lost: `completeRun` ends a run
 * exactly once, so a try whose commit went through answers `already_terminal` the next time.
 */
async function complete(
  deps: AppDeps,
  runId: string,
  outcome: RunOutcome,
  workerId: string,
): Promise<CompleteResult> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.store.completeRun({ runId, outcome, now: deps.clock.now(), leaseOwner: workerId });
    } catch (err) {
      const delay = COMPLETE_RETRY_DELAYS_MS[attempt];
      if (!isConnectionLost(err) || delay === undefined) throw err;
      deps.logger.warn({ err, runId }, "store connection lost while ending a run; trying again");
      await sleep(deps.scheduler, delay);
    }
  }
}

/**
 * The run's video from its route plan, stored in the blob store with its poster and sprite sheet
 * (previews.ts), and its charge: the run's own price and unit for the delivered length, within
 * what it reserved.
 */
async function generate(
  deps: AppDeps,
  run: RunRecord,
  workDir: string,
  signal: AbortSignal,
  {
    deadline,
    log,
    workerId,
    downloads,
  }: { deadline: number; log: Logger; workerId: string; downloads: DownloadGate | undefined },
): Promise<RunOutcome> {
  const served = deps.catalog.forRun(run.endpoint);
  if (!served) throw new ProviderError(`This server does not serve ${run.endpoint}.`);
  const request = served.model.normalize(run.input);
  const { result, route } = await callRoutes(deps, run, {
    served,
    request,
    workDir,
    signal,
    deadline,
    log,
    workerId,
    downloads,
  });
  if (!(Number.isFinite(result.durationSeconds) && result.durationSeconds > 0)) {
    throw new ProviderError(
      `The provider returned a video without a valid duration (${result.durationSeconds}).`,
    );
  }
  // Rendered first: storing the video moves its file away.
  const previews = await renderPreviews(result.path, result.durationSeconds, {
    workDir,
    signal,
    log,
    timeLeftMs: deadline - deps.clock.now().getTime(),
  });
  const fileId = newFileId();
  await deps.blobs.put(fileId, result.path);
  const previewIds = await storePreviews(deps.blobs, previews, { signal, log }).catch(async (err) => {
    await deps.blobs.delete(fileId).catch(() => {});
    throw err;
  });
  const charge = chargeForRun(run, result.durationSeconds);
  // What the vendor charges at the route's cost for this input: per run as it is, per second for
  // the same seconds the client is billed.
  const cost = route.cost && priceTierFor(route.cost, request);
  return {
    status: "succeeded",
    route: route.name,
    ...(cost ? { vendorCost: amountFor(cost, charge.billableSeconds) } : {}),
    output: {
      fileId,
      fileName: `${run.id}.mp4`,
      contentType: "video/mp4",
      durationSeconds: result.durationSeconds,
      ...previewIds,
    },
    billableSeconds: charge.billableSeconds,
    charged: charge.amount,
  };
}
