/**
 * The `/v1/videos` surface (OpenAI's `videos` resource) over runs: create and remix submit a run
 * as `POST /v1/run/…` does (keys, caps, wallet, budgets, idempotency), marked as a video with the
 * surface's own terms; retrieve, list, delete and content read and change those runs. A video's
 * id is its run's id.
 */
import { ConflictError, InvalidRequestError, isInFlight, NotFoundError } from "@refvid/core";
import type { NewVideo, RunOutputFile, RunRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { type VideoVariant, videoVariantFileId } from "../views/video-variant.js";
import { fieldNamesOf, type OpenAIVideo, videoOf } from "../views/video-view.js";
import { cancelRun } from "./cancel-run.js";
import { visibleRun } from "./get-run.js";
import { submitRun } from "./submit-run.js";
import type { MadeUpload } from "./video-references.js";
import {
  asVideoProblems,
  checkBuiltInInput,
  type VideoInput,
  type VideoParams,
  videoInput,
  videoModel,
} from "./video-request.js";
import { checkWebhookUrl } from "./webhook-url.js";

export const videoNotFound = (id: string) =>
  new NotFoundError("video_not_found", `No video ${id} in this organization.`);

/** The caller's video (a run made on this surface, not deleted), or a 404. */
async function findVideo(deps: AppDeps, caller: Caller, id: string): Promise<RunRecord> {
  const run = visibleRun(caller, await deps.store.getRun(caller.organization.id, id));
  if (!run?.video || run.video.deletedAt) throw videoNotFound(id);
  return run;
}

/**
 * Submits the video's run. `made` are the uploads the request made of its own content; the
 * Idempotency-Key's hash names them by their bytes, so a retry that sends the same file is a
 * replay (`replayed`: its own uploads are then the caller's to delete), not another request.
 */
export async function createVideo(
  deps: AppDeps,
  caller: Caller,
  params: VideoParams,
  idempotencyKey: string | undefined,
  made: readonly MadeUpload[] = [],
): Promise<{ video: OpenAIVideo; replayed: boolean }> {
  const { served, model } = videoModel(deps.catalog.current, params.model);
  const video = videoInput(deps, served, model, params);
  return submitVideo(deps, caller, video, null, idempotencyKey, made);
}

/** A new video with `source`'s model, length, size and references, and a new prompt. */
export async function remixVideo(
  deps: AppDeps,
  caller: Caller,
  sourceId: string,
  prompt: unknown,
  idempotencyKey: string | undefined,
): Promise<OpenAIVideo> {
  if (typeof prompt !== "string" || prompt.length === 0) {
    throw new InvalidRequestError([{ field: "prompt", message: "is required", rule: "required" }]);
  }
  const source = await findVideo(deps, caller, sourceId);
  if (source.status !== "succeeded") {
    throw new ConflictError(
      "video_not_completed",
      `Video ${sourceId} is ${videoOf(deps, source).status}; only a completed video can be remixed.`,
    );
  }
  const served = deps.catalog.current.get(source.endpoint);
  const fields = fieldNamesOf(served.model);
  const params = new Map(Object.keys(source.input).map((field) => [field, field]));
  params.set(fields.prompt, "prompt");
  const { video } = source as RunRecord & { video: NewVideo };
  const remix: VideoInput = {
    served,
    model: video.model,
    input: { ...source.input, [fields.prompt]: prompt },
    seconds: video.seconds,
    size: video.size,
    params,
  };
  return (await submitVideo(deps, caller, remix, source.id, idempotencyKey)).video;
}

async function submitVideo(
  deps: AppDeps,
  caller: Caller,
  video: VideoInput,
  remixedFrom: string | null,
  idempotencyKey: string | undefined,
  made: readonly MadeUpload[] = [],
): Promise<{ video: OpenAIVideo; replayed: boolean }> {
  const input = checkBuiltInInput(deps, video);
  const webhookUrl = await videoWebhookUrl(deps, caller);
  const body = { input, ...(webhookUrl ? { webhook_url: webhookUrl } : {}) };
  const outcome = await submitRun(
    deps,
    caller,
    video.served.model.slug,
    body,
    idempotencyKey && `videos:${idempotencyKey}`,
    {
      video: { model: video.model, seconds: video.seconds, size: video.size, remixedFrom },
      ...(made.length > 0
        ? { hashedAs: { ...body, input: byContent(input, made) as Record<string, unknown> } }
        : {}),
    },
  ).catch((err: unknown) => {
    throw err instanceof InvalidRequestError ? asVideoProblems(err.fields, video.params) : err;
  });
  const runId = outcome.kind === "admitted" ? outcome.run.run_id : outcome.runId;
  const run = await deps.store.getRun(caller.organization.id, runId);
  // A replay of a create whose video was deleted since answers as a read of it would.
  if (!run?.video || run.video.deletedAt) throw videoNotFound(runId);
  return { video: videoOf(deps, run), replayed: outcome.kind !== "admitted" };
}

/** `value` with every URL of an upload in `made` written as its content's digest. */
function byContent(value: unknown, made: readonly MadeUpload[]): unknown {
  if (typeof value === "string") {
    const upload = made.find((m) => m.url === value);
    return upload ? `sha256:${upload.sha256}` : value;
  }
  if (Array.isArray(value)) return value.map((item) => byContent(item, made));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, byContent(v, made)]));
  }
  return value;
}

/**
 * Where the new video's end is sent: the organization's URL when it is set and still allowed
 * (`REFVID_ALLOW_LOCAL_URLS` may have changed since); otherwise none, logged, never a `400` on a
 * parameter the client did not send.
 */
async function videoWebhookUrl(deps: AppDeps, caller: Caller): Promise<string | null> {
  const org = await deps.store.getOrganization(caller.organization.id);
  const url = org?.videoWebhookUrl ?? null;
  if (url === null) return null;
  const problems = checkWebhookUrl(url, deps.config.allowLocalUrls);
  if (problems.length === 0) return url;
  deps.logger.warn(
    { organizationId: caller.organization.id, problems },
    "the organization's video webhook URL is no longer allowed; this video's end is not sent",
  );
  return null;
}

export async function retrieveVideo(deps: AppDeps, caller: Caller, id: string): Promise<OpenAIVideo> {
  return videoOf(deps, await findVideo(deps, caller, id));
}

export interface VideoListQuery {
  after?: string;
  limit: number;
  order: "asc" | "desc";
}

/** A page of the caller's videos; `after` names the last video of the page before. */
export async function listVideos(deps: AppDeps, caller: Caller, query: VideoListQuery) {
  let after: RunRecord | undefined;
  if (query.after) {
    const found = visibleRun(caller, await deps.store.getRun(caller.organization.id, query.after));
    if (!found?.video) {
      throw new InvalidRequestError([
        { field: "after", message: `names no video (${query.after})`, rule: "cursor" },
      ]);
    }
    after = found;
  }
  const runs = await deps.store.searchRuns({
    organizationId: caller.organization.id,
    environment: caller.apiKey.environment,
    videos: true,
    oldestFirst: query.order === "asc",
    limit: query.limit + 1,
    ...(after ? { after: { createdAt: after.createdAt, id: after.id } } : {}),
  });
  const data = runs.slice(0, query.limit).map((run) => videoOf(deps, run));
  return {
    object: "list" as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: runs.length > query.limit,
  };
}

/**
 * Deletes a video: its run is cancelled first when still in flight (uncharged), its files are
 * deleted, and it leaves this surface; the run stays in the run API, billed as it ended.
 */
export async function deleteVideo(deps: AppDeps, caller: Caller, id: string) {
  const run = await findVideo(deps, caller, id);
  if (isInFlight(run.status)) {
    await cancelRun(deps, caller, id).catch((err: unknown) => {
      // It ended meanwhile: delete it as it ended.
      if (!(err instanceof ConflictError)) throw err;
    });
  }
  const deleted = await deps.store.deleteVideo(caller.organization.id, id, deps.clock.now());
  if (!deleted) throw videoNotFound(id);
  for (const fileId of outputFiles(deleted.output)) {
    await deps.blobs.delete(fileId).catch((err: unknown) => {
      deps.logger.warn({ err, runId: id, fileId }, "could not delete a deleted video's file; retention will");
    });
  }
  return { id, object: "video.deleted" as const, deleted: true as const };
}

export const VARIANTS: readonly VideoVariant[] = ["video", "thumbnail", "spritesheet"];

/** The blob of a completed video's variant, or 404/409 saying why there is none. */
export async function videoContentFile(
  deps: AppDeps,
  caller: Caller,
  id: string,
  variant: VideoVariant,
): Promise<string> {
  const run = await findVideo(deps, caller, id);
  if (run.status !== "succeeded" || !run.output) {
    throw new ConflictError(
      "video_not_completed",
      `Video ${id} is ${videoOf(deps, run).status}; its content is there once it is completed.`,
    );
  }
  const fileId = videoVariantFileId(run.output, variant);
  if (!fileId) throw new NotFoundError("variant_not_found", `Video ${id} has no ${variant}.`);
  return fileId;
}

/** Every file of a run's output: the video, and its poster and sprite sheet when made. */
function outputFiles(output: RunOutputFile | null): string[] {
  return VARIANTS.map((variant) => videoVariantFileId(output, variant)).filter(
    (fileId): fileId is string => fileId !== null,
  );
}
