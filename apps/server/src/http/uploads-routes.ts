/**
 * A reference upload's own routes, for the key's organization and environment only (anyone
 * else's upload is a 404): `GET /v1/files/{file_id}/content` reads it back, `DELETE
 * /v1/files/{file_id}` deletes it before it expires. `POST /v1/files` is `upload-route.ts`.
 */
import { NotFoundError } from "@refvid/core";
import { type Request, type Response, Router } from "express";
import type { AppDeps } from "../deps.js";
import { uploadProblem } from "../files/upload-urls.js";
import { callerOf } from "./auth.js";
import { sendBlob } from "./files-route.js";

export function uploadsRouter(deps: AppDeps): Router {
  const router = Router();
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
  return router;
}
