/**
 * The OpenAI-compatible `/v1/videos` surface (services/videos.ts), mounted with its own
 * authentication and body readers before the run API's, and answering every error in OpenAI's
 * shape (`openAIErrors`), so the `openai` SDKs raise their own error classes.
 */
import { createHash } from "node:crypto";
import { pipeline, Transform } from "node:stream";
import { InvalidRequestError } from "@refvid/core";
import express, { type ErrorRequestHandler, type Request, Router } from "express";
import type { Logger } from "pino";
import type { AppDeps } from "../../deps.js";
import { storeUpload } from "../../services/upload-file.js";
import { uploadRoom } from "../../services/upload-quota.js";
import { forgetUploads, type MadeUpload, videoParams } from "../../services/video-references.js";
import {
  createVideo,
  deleteVideo,
  listVideos,
  remixVideo,
  retrieveVideo,
  VARIANTS,
  videoContentFile,
} from "../../services/videos.js";
import type { VideoVariant } from "../../views/video-variant.js";
import { callerOf } from "../auth.js";
import { errorHandler } from "../error-handler.js";
import { RouteNotFoundError } from "../http-errors.js";
import { allowSlowBody } from "../http-server.js";
import { refuseUnstorableText } from "../text-guard.js";
import { checkedFileName, isForm } from "../upload-body.js";
import { MAX_FIELD_BYTES, readVideoForm } from "../video-form.js";
import { sendBlob } from "./files.js";

export function videosRouter(deps: AppDeps): Router {
  const router = Router();
  const json = express.json({ limit: MAX_FIELD_BYTES + 64 * 1024 });
  const guard = refuseUnstorableText();

  /** The body's fields, and the upload made of a form's file (put in `made`, with its digest). */
  const readBody = async (req: Request, res: express.Response, made: MadeUpload[] = []) => {
    if (!isForm(req)) return { fields: (req.body ?? {}) as Record<string, unknown>, file: null };
    allowSlowBody(req);
    const caller = callerOf(res);
    return readVideoForm(req, async (body, fileName) => {
      const room = await uploadRoom(deps, caller.organization.id, null);
      const digest = createHash("sha256");
      const hashed = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          digest.update(chunk);
          done(null, chunk);
        },
      });
      // An error of the form's file stream ends `hashed` with it, as storeUpload reads it.
      const upload = await storeUpload(
        deps,
        caller,
        pipeline(body, hashed, () => {}),
        checkedFileName(fileName),
        room,
      );
      made.push({ fileId: upload.file_id, url: upload.url, sha256: digest.digest("hex") });
      return upload;
    });
  };

  router.post("/", json, guard, async (req, res) => {
    const caller = callerOf(res);
    // Uploads made of this request's file and data: URLs; deleted if it makes no video.
    const made: MadeUpload[] = [];
    try {
      const { fields, file } = await readBody(req, res, made);
      const params = await videoParams(deps, caller, fields, file, made);
      const { video, replayed } = await createVideo(deps, caller, params, idempotencyKeyOf(req), made);
      // A retry answered with the video its key made before: that video reads the first uploads.
      if (replayed) await forgetUploads(deps, caller, made);
      res.json(video);
    } catch (err) {
      await forgetUploads(deps, caller, made);
      throw err;
    }
  });

  router.get("/", guard, async (req, res) => {
    res.json(await listVideos(deps, callerOf(res), listQuery(req)));
  });

  router.get("/:video_id", async (req, res) => {
    res.json(await retrieveVideo(deps, callerOf(res), req.params.video_id as string));
  });

  router.delete("/:video_id", async (req, res) => {
    res.json(await deleteVideo(deps, callerOf(res), req.params.video_id as string));
  });

  router.get("/:video_id/content", async (req, res) => {
    const variant = req.query.variant ?? "video";
    if (!VARIANTS.includes(variant as VideoVariant)) {
      throw new InvalidRequestError([
        { field: "variant", message: `must be one of ${VARIANTS.join(", ")}`, rule: "enum" },
      ]);
    }
    const fileId = await videoContentFile(
      deps,
      callerOf(res),
      req.params.video_id as string,
      variant as VideoVariant,
    );
    await sendBlob(deps, req, res, fileId);
  });

  router.post("/:video_id/remix", json, guard, async (req, res) => {
    const { fields } = await readBody(req, res);
    const video = await remixVideo(
      deps,
      callerOf(res),
      req.params.video_id as string,
      fields.prompt,
      idempotencyKeyOf(req),
    );
    res.json(video);
  });

  router.use((req, _res, next) => next(new RouteNotFoundError(req.method, req.baseUrl + req.path)));
  router.use(openAIErrors(deps.logger));
  return router;
}

/** The request's Idempotency-Key, held to the run API's limits (1 to 255 characters). */
function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get("idempotency-key");
  if (key !== undefined && (key.length === 0 || key.length > 255)) {
    throw new InvalidRequestError([
      { field: "Idempotency-Key", message: "must be 1 to 255 characters", rule: "maxLength" },
    ]);
  }
  return key;
}

function listQuery(req: Request) {
  const { after, limit = "20", order = "desc" } = req.query;
  const problems = [];
  const count = Number(limit);
  if (typeof limit !== "string" || !/^\d+$/.test(limit) || count < 1 || count > 100) {
    problems.push({ field: "limit", message: "must be a whole number from 1 to 100", rule: "range" });
  }
  if (order !== "asc" && order !== "desc")
    problems.push({ field: "order", message: "must be asc or desc", rule: "enum" });
  if (after !== undefined && typeof after !== "string")
    problems.push({ field: "after", message: "must be a video id", rule: "type" });
  if (problems.length > 0) throw new InvalidRequestError(problems);
  return { limit: count, order: order as "asc" | "desc", ...(typeof after === "string" ? { after } : {}) };
}

const ERROR_TYPES: Record<number, string> = {
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  409: "conflict_error",
  429: "rate_limit_error",
};

/**
 * The run API's error handler (errors.ts: the statuses, headers and logging stay the same), with
 * each body rewritten in OpenAI's shape: `{error: {message, type, param, code, request_id}}`.
 */
export function openAIErrors(logger: Logger): ErrorRequestHandler {
  const refvid = errorHandler(logger);
  return (err, req, res, next) => {
    const send = res.json.bind(res);
    res.json = (body: unknown) => send(openAIBody(res.statusCode, body));
    refvid(err, req, res, next);
  };
}

interface RefvidBody {
  error:
    | string
    | {
        type?: string;
        code?: string | number;
        message?: string;
        fields?: { field: string }[];
        request_id?: string;
      };
  message?: string;
  request_id?: string;
}

export function openAIBody(status: number, body: unknown) {
  const { error, message, request_id } = body as RefvidBody;
  const detail = typeof error === "string" ? { code: error, message, request_id } : error;
  const code = typeof detail.code === "string" ? detail.code : (detail.type ?? null);
  return {
    error: {
      message: detail.message ?? "The request failed.",
      type: ERROR_TYPES[status] ?? (status >= 500 ? "server_error" : "invalid_request_error"),
      param: typeof error === "object" ? (error.fields?.[0]?.field ?? null) : null,
      code,
      request_id: detail.request_id ?? request_id,
    },
  };
}
