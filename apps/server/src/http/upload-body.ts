/**
 * Reading a reference upload from its request (`POST /v1/files`): the file's bytes and the name
 * the client gave, from a `multipart/form-data` form (the file in a field named `file`) or from
 * the raw body and its `Content-Disposition`, and the 400s for a body that cannot be read.
 */
import type { Readable } from "node:stream";
import { InvalidRequestError } from "@refvid/core";
import busboy from "busboy";
import contentDisposition from "content-disposition";
import type { Request } from "express";
import { TEXT_RULE, textProblem } from "./text-guard.js";

const missingFile = () =>
  new InvalidRequestError([
    {
      field: "body.file",
      message: "is required: send the file as a multipart/form-data field named file, or as the raw body",
      rule: "required",
    },
  ]);

/** Whether the body is a `multipart/form-data` form (else it is the file itself). */
export const isForm = (req: Request) => /^multipart\/form-data\b/i.test(req.get("content-type") ?? "");

/** A 400 for a multipart body that cannot be read as a form. */
export const unreadableForm = (reason: string | undefined) =>
  new InvalidRequestError([
    { field: "body", message: `is not a readable form: ${reason}`, rule: "multipart" },
  ]);

/**
 * A form reader for the request, holding it to `limits`: a `Content-Type` busboy cannot read (no
 * boundary, say) is the 400 of an unreadable form, thrown.
 */
export function openForm(req: Request, limits: busboy.Limits): busboy.Busboy {
  try {
    // File names as browsers and curl send them: UTF-8.
    return busboy({ headers: req.headers, defParamCharset: "utf8", limits });
  } catch (err) {
    throw unreadableForm((err as Error).message);
  }
}

/** A 400 for a body that failed while it was read: a form that stops short, or a raw body cut off. */
export function unreadableBody(req: Request, reason: string | undefined): InvalidRequestError {
  return isForm(req)
    ? unreadableForm(reason)
    : new InvalidRequestError([{ field: "body", message: `could not be read: ${reason}`, rule: "readable" }]);
}

/**
 * The file's bytes and the name the client gave, from a form or from the raw body. `onError` hears
 * every error of that stream from the start: a form cut short fails its file stream in the same
 * turn as it is found, before any `await` after this could listen.
 */
export function fileOf(
  req: Request,
  onError: (err: Error) => void,
): Promise<{ body: Readable; fileName: string | null }> {
  if (!isForm(req)) {
    req.on("error", onError);
    return Promise.resolve({ body: req, fileName: dispositionFileName(req.get("content-disposition")) });
  }
  return new Promise((resolve, reject) => {
    // A throw here (a body that is no form) rejects the promise.
    const form = openForm(req, { files: 1, fields: 20, fieldSize: 4096, parts: 30 });
    let found = false;
    form.on("file", (name, stream, info) => {
      if (name !== "file" || found) {
        stream.on("error", () => {}); // fails with the form when the request does
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
    // A request that ends short (the client hung up, or the request timed out) fails the form and
    // its file stream with it; `pipe` alone would leave them waiting, and the blob store with them.
    const cutShort = (err?: Error) => {
      if (!req.complete) form.destroy(err ?? Object.assign(new Error("aborted"), { code: "ECONNRESET" }));
    };
    req.on("error", cutShort);
    req.once("close", () => cutShort());
  });
}

/** The longest file name kept; a longer one is cut. */
const MAX_FILE_NAME = 255;

/**
 * The name the client gave, from either source, as it will be stored: cut to 255 code units, and
 * refused (400 naming `body.file`) when no store could keep it as sent, as any text in a JSON body is.
 */
export function checkedFileName(name: string | null): string | null {
  if (!name) return null;
  const problem = textProblem(name);
  if (problem) {
    throw new InvalidRequestError([{ field: "body.file", message: `file name ${problem}`, rule: TEXT_RULE }]);
  }
  // Cut by UTF-16 units, but never between the two halves of a character.
  return name.slice(0, MAX_FILE_NAME).replace(/[\ud800-\udbff]$/, "");
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
