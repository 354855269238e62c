/**
 * Reading a `/v1/videos` request body as the `openai` SDKs send it: `multipart/form-data` whose
 * nested fields are written `input_reference[image_url]` and arrays `input_references[]`, with
 * an uploaded file in `input_reference`; or JSON. The file streams into the caller's uploads as it
 * arrives (services/upload-file.ts), so a form whose file comes before its other fields is read in
 * one pass.
 */

import type { Readable } from "node:stream";
import type { FileUpload } from "@refvid/api-types";
import { InvalidRequestError, RefvidError } from "@refvid/core";
import type { Request } from "express";
import { UploadTooLargeError } from "../services/upload-file.js";
import { TEXT_RULE, textProblem } from "./text-guard.js";
import { openForm, unreadableForm } from "./upload-body.js";

/** The body as a plain object, with the uploaded file (if any) under `input_reference`. */
export interface VideoForm {
  fields: Record<string, unknown>;
  /** The upload made of a file sent in `input_reference`. */
  file: FileUpload | null;
}

/** The longest field a form may hold: a `data:` URL of a 30 MB image, in base64. */
export const MAX_FIELD_BYTES = 42 * 1024 * 1024;
/** All of a form's fields together: one such `data:` URL and the rest. */
export const MAX_FORM_TEXT_BYTES = MAX_FIELD_BYTES + 1024 * 1024;
/** Names that would reach an object's prototype: refused in any part of a field's name. */
const UNSAFE_NAMES = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Reads the form; `store` keeps the file of `input_reference` (any other file field is a 400).
 * Rejects with the store's own error (a 413, a 415) when the file cannot be kept.
 */
export function readVideoForm(
  req: Request,
  store: (body: Readable, fileName: string | null) => Promise<FileUpload>,
): Promise<VideoForm> {
  return new Promise((resolve, reject) => {
    // A throw here (a body that is no form) rejects the promise.
    const form = openForm(req, { files: 1, fields: 100, fieldSize: MAX_FIELD_BYTES, parts: 101 });
    const fields: Record<string, unknown> = Object.create(null);
    let upload: Promise<FileUpload> | null = null;
    let failed: unknown = null;
    let textBytes = 0;
    const fail = (err: unknown) => {
      failed ??= err;
    };
    form.on("field", (name, value, info) => {
      textBytes += name.length + value.length;
      if (textBytes > MAX_FORM_TEXT_BYTES) {
        fail(new UploadTooLargeError(`body: the form's fields pass ${MAX_FORM_TEXT_BYTES} bytes together.`));
        return;
      }
      const problem = info.valueTruncated
        ? `is longer than ${MAX_FIELD_BYTES} bytes`
        : (textProblem(name) ?? textProblem(value) ?? unsafeName(name));
      if (problem) fail(new InvalidRequestError([{ field: name, message: problem, rule: TEXT_RULE }]));
      else setField(fields, name, value);
    });
    form.on("file", (name, stream, info) => {
      if (name !== "input_reference" || upload) {
        stream.resume();
        fail(
          new InvalidRequestError([
            { field: name, message: "takes no file here; send one in input_reference", rule: "file" },
          ]),
        );
        return;
      }
      // The store may refuse at once (a file name no store keeps): a rejection, never a throw out
      // of this listener, which would end the process.
      upload = Promise.resolve().then(() => store(stream, info.filename ?? null));
      // Reading the rest of the form must not wait on a file the store refused.
      upload.catch((err: unknown) => {
        stream.resume();
        fail(err);
      });
    });
    const tooMany = (what: string) => () =>
      fail(new InvalidRequestError([{ field: "body", message: `has too many ${what}`, rule: "multipart" }]));
    form.on("partsLimit", tooMany("parts"));
    form.on("filesLimit", tooMany("files: send one, in input_reference"));
    form.on("fieldsLimit", tooMany("fields"));
    form.on("error", (err: Error) => reject(unreadableForm(err.message)));
    form.on("close", () => {
      const pending: Promise<FileUpload | null> = upload ?? Promise.resolve(null);
      pending.then(
        (file) => (failed ? reject(failed) : resolve({ fields, file })),
        (err: unknown) => reject(err instanceof RefvidError ? err : (failed ?? err)),
      );
    });
    req.pipe(form);
    req.on("error", (err) => form.destroy(err));
  });
}

/**
 * Sets a form field by its bracketed name: `a[b]` is `{a: {b}}`, `a[]` appends to an array, and
 * `a[][b]` starts a new element of `a` when the last one already has `b`.
 */
export function setField(target: Record<string, unknown>, name: string, value: string): void {
  const path = pathOf(name);
  if (path.some((part) => UNSAFE_NAMES.has(part))) return;
  setPath(target, path, value);
}

/** A field name's parts: `a[b][]` is `a`, `b` and `` (append). */
function pathOf(name: string): string[] {
  const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(name);
  if (!match) return [name];
  return [match[1] as string, ...[...(match[2] ?? "").matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
}

/** Why a field's name is refused: a part of it would reach an object's prototype. */
function unsafeName(name: string): string | null {
  const part = pathOf(name).find((p) => UNSAFE_NAMES.has(p));
  return part === undefined ? null : `names ${part}, which no field of this request is`;
}

function setPath(container: Record<string, unknown> | unknown[], path: string[], value: string): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (Array.isArray(container)) {
    if (rest.length === 0) {
      container.push(value);
      return;
    }
    let last = container.at(-1) as Record<string, unknown> | undefined;
    if (!last || typeof last !== "object" || hasPath(last, rest)) {
      last = Object.create(null) as Record<string, unknown>;
      container.push(last);
    }
    setPath(last, rest, value);
    return;
  }
  if (rest.length === 0) {
    container[head] = value;
    return;
  }
  const next = rest[0] === "" ? [] : Object.create(null);
  const existing = Object.hasOwn(container, head) ? container[head] : undefined;
  const child = existing && typeof existing === "object" ? existing : next;
  container[head] = child;
  if (rest[0] === "") setPath(child as unknown[], rest, value);
  else setPath(child as Record<string, unknown>, rest, value);
}

function hasPath(object: Record<string, unknown>, path: string[]): boolean {
  const [head, ...rest] = path;
  if (head === undefined || head === "") return false;
  if (!Object.hasOwn(object, head)) return false;
  if (rest.length === 0) return true;
  const child = object[head];
  return (
    typeof child === "object" &&
    child !== null &&
    !Array.isArray(child) &&
    hasPath(child as Record<string, unknown>, rest)
  );
}
