/**
 * `POST /v1/files`: a reference upload, as `multipart/form-data` (the file in a field named
 * `file`) or as the raw body with its own `Content-Type`. Runs after authentication and the rate
 * limit, and instead of the JSON body reader: the body streams into the blob store
 * (services/upload-file.ts). It may take longer than the request timeout while its bytes keep
 * arriving. An answer given before the whole body was read closes the connection.
 */
import type { Readable } from "node:stream";
import { InvalidRequestError, RefvidError } from "@refvid/core";
import busboy from "busboy";
import contentDisposition from "content-disposition";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import type { AppDeps } from "../deps.js";
import { formatBytes, MAX_UPLOAD_BYTES } from "../media/limits.js";
import { storeUpload, UploadTooLargeError } from "../services/upload-file.js";
import { callerOf } from "./auth.js";
import { clientWentAway } from "./files-route.js";
import { allowSlowBody } from "./http-server.js";
import { TEXT_RULE, textProblem } from "./text-guard.js";

/** Room for the multipart boundaries and part headers around the file. */
const MULTIPART_OVERHEAD = 64 * 1024;

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
      allowSlowBody(req);
      const { body, fileName } = await fileOf(req, (err) => {
        bodyError ??= err;
      });
      const upload = await storeUpload(deps, callerOf(res), body, checkedFileName(fileName));
      hangUpEarly();
      res.status(201).json(upload);
    } catch (caught) {
      let err = caught;
      const clientLeft = (req.destroyed && !req.complete) || clientWentAway(bodyError);
      if (!(err instanceof RefvidError) && (bodyError || clientLeft)) {
        // The body itself failed, not refvid: the client left, or sent a form that stops short.
        if (clientLeft) {
          deps.logger.debug({ requestId: res.locals.requestId, err }, "upload ended early by the client");
          res.destroy();
          return;
        }
        err = isForm(req)
          ? unreadableForm(bodyError?.message)
          : new InvalidRequestError([
              { field: "body", message: `could not be read: ${bodyError?.message}`, rule: "readable" },
            ]);
      }
      hangUpEarly();
      next(err);
    }
  };
}

const missingFile = () =>
  new InvalidRequestError([
    {
      field: "body.file",
      message: "is required: send the file as a multipart/form-data field named file, or as the raw body",
      rule: "required",
    },
  ]);

const isForm = (req: Request) => /^multipart\/form-data\b/i.test(req.get("content-type") ?? "");

/** A 400 for a multipart body that cannot be read as a form. */
const unreadableForm = (reason: string | undefined) =>
  new InvalidRequestError([
    { field: "body", message: `is not a readable form: ${reason}`, rule: "multipart" },
  ]);

/**
 * The file's bytes and the name the client gave, from a form or from the raw body. `onError` hears
 * every error of that stream from the start: a form cut short fails its file stream in the same
 * turn as it is found, before any `await` after this could listen.
 */
function fileOf(
  req: Request,
  onError: (err: Error) => void,
): Promise<{ body: Readable; fileName: string | null }> {
  if (!isForm(req)) {
    req.on("error", onError);
    return Promise.resolve({ body: req, fileName: dispositionFileName(req.get("content-disposition")) });
  }
  return new Promise((resolve, reject) => {
    let form: busboy.Busboy;
    try {
      form = busboy({
        headers: req.headers,
        // File names as browsers and curl send them: UTF-8.
        defParamCharset: "utf8",
        limits: { files: 1, fields: 20, fieldSize: 4096, parts: 30 },
      });
    } catch (err) {
      reject(unreadableForm((err as Error).message));
      return;
    }
    let found = false;
    form.on("file", (name, stream, info) => {
      if (name !== "file" || found) {
        stream.resume();
        return;
      }
      found = true;
      stream.on("error", onError);
      resolve({ body: stream, fileName: info.filename ?? null });
    });
    form.on("error", (err: Error) => reject(unreadableForm(err.message)));
    form.on("close", () => {
      if (!found) reject(missingFile());
    });
    req.pipe(form);
  });
}

/** The longest file name kept; a longer one is cut. */
const MAX_FILE_NAME = 255;

/**
 * The name the client gave, from either source, as it will be stored: cut to 255 code units, and
 * refused (400 naming `body.file`) when no store could keep it as sent, as any text in a JSON body is.
 */
function checkedFileName(name: string | null): string | null {
  if (!name) return null;
  const problem = textProblem(name);
  if (problem) {
    throw new InvalidRequestError([{ field: "body.file", message: `file name ${problem}`, rule: TEXT_RULE }]);
  }
  // Cut by UTF-16 units, but never between the two halves of a character.
  return name.slice(0, MAX_FILE_NAME).replace(/[\ud800-\udbff]$/, "");
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

/** The file name of `Content-Disposition` (RFC 6266: `filename*` wins over `filename`), if any. */
function dispositionFileName(header: string | undefined): string | null {
  if (!header) return null;
  try {
    return contentDisposition.parse(header).parameters.filename || null;
  } catch {
    return null;
  }
}
