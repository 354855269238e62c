/**
 * `GET /v1/files/{file_id}`: serves a generated video (or, to a model vendor, a reference upload)
 * at its signed, expiring URL, with single byte-range support so a browser `<video>` can seek.
 */
import { pipeline } from "node:stream/promises";
import { ForbiddenError, NotFoundError, RangeNotSatisfiableError } from "@refvid/core";
import { type Request, type Response, Router } from "express";
import type { AppDeps } from "../../deps.js";

export function filesRouter(deps: AppDeps): Router {
  const router = Router();
  const handler = async (req: Request, res: Response) => {
    const fileId = req.params.file_id as string;
    const expires = Number(req.query.expires);
    const signature = typeof req.query.signature === "string" ? req.query.signature : "";
    if (!Number.isSafeInteger(expires) || !signature) {
      throw new ForbiddenError(
        "invalid_file_signature",
        "The file URL lacks expires or signature. Use the URL from the run output as given.",
      );
    }
    const verdict = deps.signer.check(fileId, expires, signature, deps.clock.now());
    if (verdict === "invalid")
      throw new ForbiddenError(
        "invalid_file_signature",
        "The file URL signature does not match. Use the URL from the run output as given.",
      );
    if (verdict === "expired")
      throw new ForbiddenError(
        "file_url_expired",
        "The file URL expired. Poll the run again for a fresh URL.",
      );
    await sendBlob(deps, req, res, fileId);
  };
  router.get("/v1/files/:file_id", handler);
  router.head("/v1/files/:file_id", handler);
  return router;
}

/**
 * Sends a stored blob, whole or the one byte range asked for (a `<video>` seeks with ranges), as
 * the media type it was stored with; HEAD sends the headers only.
 */
export async function sendBlob(deps: AppDeps, req: Request, res: Response, fileId: string): Promise<void> {
  const info = await deps.blobs.stat(fileId);
  if (!info)
    throw new NotFoundError("file_not_found", `No file ${fileId}; outputs are kept for a limited time.`);

  const range = parseRange(req.get("range"), info.size);
  if (range === "unsatisfiable") {
    res.setHeader("Content-Range", `bytes */${info.size}`);
    throw new RangeNotSatisfiableError(`The range starts past the end of the file (${info.size} bytes).`);
  }
  res.setHeader("Accept-Ranges", "bytes");
  res.setHeader("Content-Type", info.contentType);
  // Uploaded references are served as the media type their bytes showed, never sniffed again.
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "private, max-age=3600");
  if (range) {
    res.status(206);
    res.setHeader("Content-Range", `bytes ${range.start}-${range.end}/${info.size}`);
    res.setHeader("Content-Length", String(range.end - range.start + 1));
  } else {
    res.setHeader("Content-Length", String(info.size));
  }
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  try {
    await pipeline(await deps.blobs.read(fileId, range ?? undefined), res);
  } catch (err) {
    // A player seeking or a client closing the tab ends the download early: routine, not an error.
    if (!clientWentAway(err)) throw err;
    deps.logger.debug(
      { requestId: res.locals.requestId, fileId, code: (err as NodeJS.ErrnoException).code },
      "file download ended early by the client",
    );
  }
}

const CLIENT_GONE = new Set(["ERR_STREAM_PREMATURE_CLOSE", "ECONNRESET", "EPIPE"]);

/** The error of a stream the client cut (it closed the tab, lost its network). */
export function clientWentAway(err: unknown): boolean {
  return CLIENT_GONE.has((err as NodeJS.ErrnoException | undefined)?.code ?? "");
}

/**
 * One `bytes=` range (start-end, start-, or -suffix); null means the whole file, which is also the
 * answer to a range that is not valid syntax (RFC 9110, 14.2: ignore it) or names several ranges.
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | "unsatisfiable" {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match) return null;
  const [, from = "", to = ""] = match;
  if (from === "" && to === "") return null;
  let start: number;
  let end: number;
  if (from === "") {
    const suffix = Number(to);
    if (suffix === 0) return "unsatisfiable";
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(from);
    if (to !== "" && Number(to) < start) return null;
    end = to === "" ? size - 1 : Math.min(Number(to), size - 1);
  }
  if (start >= size) return "unsatisfiable";
  return { start, end };
}
