/**
 * One rule for text at the edge, the same on every store: no string in a request may contain
 * U+0000 (Postgres text cannot hold it) or an unpaired UTF-16 surrogate (not Unicode, so it can be
 * neither stored nor echoed back faithfully). Body strings and property names, query values and
 * path segments (which must also be valid percent-encoded UTF-8) are checked after the body is
 * parsed and before OpenAPI validation; offenders are `400 invalid_request` naming each field.
 * Bodies nested deeper than any operation needs are refused here too, before anything recurses.
 */
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { type FieldProblem, InvalidRequestError } from "@refvid/core";
import type { RequestHandler } from "express";

/** Deeper than any request body of the spec (a submit is four levels deep). */
export const MAX_BODY_DEPTH = 32;
const MAX_PROBLEMS = 20;
export const TEXT_RULE = "unicode";

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first offending code unit of `text`: NUL, an unpaired surrogate, or undefined. */
function offending(text: string): string | undefined {
  return text.includes("\u0000") ? "\u0000" : LONE_SURROGATE.exec(text)?.[0];
}

/** What is wrong with `text` as a value, or null when it can be stored and echoed as sent. */
export function textProblem(text: string): string | null {
  const found = offending(text);
  if (found === undefined) return null;
  return found === "\u0000"
    ? "must not contain U+0000 (NUL)"
    : `must be well-formed Unicode; it has an unpaired surrogate (U+${hex(found)})`;
}

function keyProblem(key: string): string | null {
  const found = offending(key);
  if (found === undefined) return null;
  return found === "\u0000"
    ? "has a property name containing U+0000 (NUL)"
    : `has a property name with an unpaired surrogate (U+${hex(found)})`;
}

const hex = (unit: string) => unit.charCodeAt(0).toString(16).toUpperCase();

export function refuseUnstorableText(): RequestHandler {
  const templates = pathTemplates();
  return (req, _res, next) => {
    const problems: FieldProblem[] = [];
    const add = (field: string, message: string) => {
      if (problems.length < MAX_PROBLEMS) problems.push({ field, message, rule: TEXT_RULE });
    };
    // Without a `%`, a path holds no NUL or surrogate (the HTTP parser refuses raw control bytes,
    // and other raw bytes read as Latin-1); without a `?`, there is no query to read.
    const url = req.originalUrl;
    const query = url.indexOf("?");
    const path = query < 0 ? url : url.slice(0, query);
    if (path.includes("%")) checkPath(req.baseUrl + req.path, templates, add);
    if (query >= 0) walk(req.query, "query", add);
    const depth = req.body === undefined ? 0 : walk(req.body, "body", add);
    if (depth > MAX_BODY_DEPTH) {
      add("body", `is nested more than ${MAX_BODY_DEPTH} levels deep, deeper than any operation takes`);
    }
    next(problems.length ? new InvalidRequestError(problems) : undefined);
  };
}

/**
 * Checks every string and property name under `root` without recursion (a body may be nested
 * thousands deep); returns the depth reached, stopping just past the limit.
 */
function walk(root: unknown, rootName: string, add: (field: string, message: string) => void): number {
  const stack: { value: unknown; field: string; depth: number }[] = [
    { value: root, field: rootName, depth: 0 },
  ];
  let deepest = 0;
  while (stack.length) {
    const { value, field, depth } = stack.pop() as (typeof stack)[number];
    deepest = Math.max(deepest, depth);
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) add(field, problem);
    } else if (value !== null && typeof value === "object") {
      if (depth > MAX_BODY_DEPTH) continue;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i--)
          stack.push({ value: value[i], field: `${field}[${i}]`, depth: depth + 1 });
      } else {
        const entries = Object.entries(value);
        for (let i = entries.length - 1; i >= 0; i--) {
          const [key, child] = entries[i] as [string, unknown];
          const problem = keyProblem(key);
          if (problem) {
            add(field, problem);
            continue;
          }
          stack.push({ value: child, field: `${field}.${key}`, depth: depth + 1 });
        }
      }
    }
  }
  return deepest;
}

interface Template {
  /** Literal segments, or null where the template has a parameter. */
  segments: (string | null)[];
  names: (string | null)[];
}

/** The spec's path templates, concrete ones (more literal segments) first. */
function pathTemplates(): Template[] {
  const document = loadOpenapiDocument() as { paths?: Record<string, unknown> };
  return Object.keys(document.paths ?? {})
    .map((path) => {
      const parts = path.split("/").slice(1);
      return {
        segments: parts.map((p) => (/^\{.+\}$/.test(p) ? null : p)),
        names: parts.map((p) => /^\{(.+)\}$/.exec(p)?.[1] ?? null),
      };
    })
    .sort((a, b) => b.segments.filter(Boolean).length - a.segments.filter(Boolean).length);
}

/** Names a bad segment by the parameter it fills in the first template the path fits. */
function checkPath(path: string, templates: Template[], add: (field: string, message: string) => void) {
  const raw = path.split("/").slice(1);
  const bad: { index: number; message: string }[] = [];
  const decoded = raw.map((segment, index) => {
    try {
      const text = decodeURIComponent(segment);
      const problem = textProblem(text);
      if (problem) bad.push({ index, message: problem });
      return text;
    } catch {
      bad.push({ index, message: "must be valid percent-encoded UTF-8" });
      return null;
    }
  });
  if (!bad.length) return;
  const fits = templates.find(
    (t) =>
      t.segments.length === raw.length &&
      t.segments.every((literal, i) => literal === null || literal === decoded[i]),
  );
  for (const { index, message } of bad) {
    const name = fits?.names[index];
    add(name ? `path.${name}` : "path", message);
  }
}
