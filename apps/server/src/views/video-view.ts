/**
 * A run of the `/v1/videos` surface as OpenAI's video object, and that surface's webhook event.
 * Its `id` is the run's id: the one record has two views.
 */
import type { components } from "@refvid/api-types";
import type { ModelDefinition } from "@refvid/core";
import type { RunRecord } from "@refvid/store";
import type { AppDeps } from "../deps.js";

export type OpenAIVideo = components["schemas"]["VideoJob"];

const unix = (date: Date) => Math.floor(date.getTime() / 1000);

const STATUS: Record<RunRecord["status"], OpenAIVideo["status"]> = {
  queued: "queued",
  processing: "in_progress",
  succeeded: "completed",
  failed: "failed",
  cancelled: "failed",
  timeout: "failed",
};

export interface VideoViewContext {
  /** The run's prompt, read from its input by its model. */
  prompt: string | null;
  /** How long generated files are kept (REFVID_FILE_RETENTION_HOURS). */
  retentionHours: number;
}

/** The video object of a run made on the `/v1/videos` surface. */
export function toVideo(run: RunRecord, { prompt, retentionHours }: VideoViewContext): OpenAIVideo {
  const video = run.video;
  if (!video) throw new Error(`run ${run.id} was not made on the videos surface`);
  const status = STATUS[run.status];
  const completedAt = run.completedAt ? unix(run.completedAt) : null;
  return {
    id: run.id,
    object: "video",
    model: video.model,
    status,
    progress: status === "completed" ? 100 : Math.floor((run.progress ?? 0) * 100),
    created_at: unix(run.createdAt),
    completed_at: completedAt,
    expires_at: status === "completed" && completedAt !== null ? completedAt + retentionHours * 3600 : null,
    error: run.error ? { code: errorCode(run), message: run.error.message } : null,
    prompt,
    seconds: video.seconds,
    size: video.size,
    remixed_from_video_id: video.remixedFrom,
  };
}

/** The input field of each meaning for this model (a catalog file model's `fields`). */
export function fieldNamesOf(model: ModelDefinition) {
  const names = model.fieldNames ?? {};
  return {
    prompt: names.prompt ?? "prompt",
    duration: model.durationField ?? names.duration ?? "duration",
    resolution: names.resolution ?? "resolution",
    aspectRatio: names.aspect_ratio ?? "aspect_ratio",
  };
}

/** The video object of a run, its prompt read from its input by its model. */
export function videoOf(deps: Pick<AppDeps, "catalog" | "config">, run: RunRecord): OpenAIVideo {
  const served = deps.catalog.forRun(run.endpoint);
  const prompt = served ? run.input[fieldNamesOf(served.model).prompt] : undefined;
  return toVideo(run, {
    prompt: typeof prompt === "string" ? prompt : null,
    retentionHours: deps.config.fileRetentionHours,
  });
}

/** A cancelled or timed-out run is `failed` with its own code; a failure has its error type. */
function errorCode(run: RunRecord): string {
  if (run.status === "timeout") return "timeout";
  if (run.status === "cancelled") return "cancelled";
  return run.error?.type ?? "internal_error";
}

/** The body of a `video.completed` or `video.failed` delivery (OpenAI's event shape). */
export function videoEvent(deliveryId: string, type: string, at: Date, video: OpenAIVideo): string {
  return JSON.stringify({ id: deliveryId, object: "event", created_at: unix(at), type, data: video });
}
