/**
 * A reference upload's routes, for the key's organization and environment only (anyone else's
 * upload is a 404). `POST /v1/files` takes one, as `multipart/form-data` (the file in a field named
 * `file`) or as the raw body with its own `Content-Type`; `GET /v1/files/{file_id}/content` reads
 * it back; `DELETE /v1/files/{file_id}` deletes it before it expires.
 *
 * `POST /v1/files` runs after authentication and the rate limit, and instead of the JSON body
 * reader: the body streams into the blob store (services/upload-file.ts). It may take longer than
 * the request timeout while its bytes keep arriving. An answer given before the whole body was
 * read closes the connection.
 */
import { NotFoundError, RefvidError } from "@refvid/core";
import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import type { AppDeps } from "../../deps.js";
import { uploadProblem } from "../../files/upload-urls.js";
import { formatBytes, MAX_UPLOAD_BYTES } from "../../media/limits.js";
import { storeUpload, UploadTooLargeError } from "../../services/upload-file.js";
import { uploadRoom } from "../../services/upload-quota.js";
import { storageFullOf } from "../../storage-full.js";
import { callerOf } from "../auth.js";
import { allowSlowBody } from "../http-server.js";
import { checkedFileName, fileOf, isForm, unreadableBody } from "../upload-body.js";
import { clientWentAway, sendBlob } from "./files.js";

/** Room for the multipart boundaries and part headers around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

/** `POST /v1/files`, mounted on its own before the JSON body reader. */
export function uploadRoute(deps: AppDeps): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    // Whatever is answered before the body is read through, the rest of it is read and dropped.
    const hangUpEarly = () => {
      if (!req.complete) res.once("finish", () => drainThenClose(req));
    };
    let bodyError: Error | undefined;
    try {
      const announced = Number(req.get("content-length"));
      if (announced > MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD) {
        throw new UploadTooLargeError(
          `file: the body is ${announced} bytes; uploads take at most ${formatBytes(MAX_UPLOAD_BYTES)} (${MAX_UPLOAD_BYTES} bytes).`,
        );
      }
      const caller = callerOf(res);
      // The least the file can be, from the length announced: a form's file is the body less its
      // boundaries and part headers.
      const fileBytes =
        announced > 0 ? Math.max(1, announced - (isForm(req) ? MULTIPART_OVERHEAD : 0)) : null;
      const room = await uploadRoom(deps, caller.organization.id, fileBytes);
      allowSlowBody(req);
      const { body, fileName } = await fileOf(req, (err) => {
        bodyError ??= err;
      });
      const upload = await storeUpload(deps, caller, body, checkedFileName(fileName), room);
      hangUpEarly();
      res.status(201).json(upload);
    } catch (caught) {
      if ((req.destroyed && !req.complete) || clientWentAway(bodyError)) {
        // The client left, or its request timed out: nobody is there to answer.
        deps.logger.debug(
          { requestId: res.locals.requestId, err: caught },
          "upload ended early by the client",
        );
        res.destroy();
        return;
      }
      // A body that failed, not refvid: a form that stops short. A full disk fails the body's
      // stream too, but is refvid's (a 503).
      const err =
        !(caught instanceof RefvidError) && !storageFullOf(caught) && bodyError
          ? unreadableBody(req, bodyError.message)
          : caught;
      hangUpEarly();
      next(err);
    }
  };
}

/** How long the rest of a refused body is read and dropped before the connection is closed. */
const LINGER_MS = 5_000;

/**
 * After an early answer, reads and drops what the client still sends; if that takes longer than
 * a moment, closes the connection. Closing at once with unread bytes would reset it, and a client
 * still sending (fetch, for one) would lose the answer it was sent: the reason nginx lingers too.
 * A body that ends in time leaves the connection open for the next request.
 */
function drainThenClose(req: Request): void {
  req.unpipe();
  req.removeAllListeners("readable");
  req.removeAllListeners("data");
  req.resume();
  const timer = setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  req.once("end", () => clearTimeout(timer));
  req.once("close", () => clearTimeout(timer));
}

/** The upload's own routes: read it back, delete it. */
export function uploadsRoutes(router: Router, deps: AppDeps): void {
  const owned = (res: Response, id: string) => {
    const { apiKey } = callerOf(res);
    return { organizationId: apiKey.organizationId, environment: apiKey.environment, id };
  };
  const content = async (req: Request, res: Response) => {
    const id = req.params.file_id as string;
    const upload = await deps.store.getUpload(owned(res, id));
    const problem = uploadProblem(upload, deps.clock.now());
    if (problem) throw new NotFoundError("file_not_found", `Upload ${id} ${problem}.`);
    await sendBlob(deps, req, res, id);
  };
  router.get("/v1/files/:file_id/content", content);
  router.head("/v1/files/:file_id/content", content);
  router.delete("/v1/files/:file_id", async (req, res) => {
    const id = req.params.file_id as string;
    if (!(await deps.store.deleteUpload(owned(res, id)))) {
      throw new NotFoundError(
        "file_not_found",
        `${id} is not an upload of this API key's organization and environment.`,
      );
    }
    // The upload is gone with its record, and nothing can use it: bytes that could not be deleted
    // now are logged, and left to the retention sweep's backstop for bytes without a record
    // (files/retention.ts), which takes them once older than the longest upload TTL.
    await deps.blobs.delete(id).catch((err: unknown) => {
      deps.logger.error(
        { err, id, requestId: res.locals.requestId },
        "could not delete a deleted upload's bytes",
      );
    });
    res.json({ file_id: id, deleted: true });
  });
}
