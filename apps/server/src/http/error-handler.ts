/**
 * The one place errors become responses (DESIGN.md, "Errors we define"). Domain errors carry
 * their status and type; the OpenAPI validator's errors become `400 invalid_request` with every
 * field problem named; anything else is a logged `500 internal_error`, never a stack trace.
 */
import {
  ConcurrencyLimitError,
  type FieldProblem,
  formatUsd,
  InsufficientBalanceError,
  InvalidRequestError,
  isModelSlug,
  MODELS,
  type ModelSlug,
  RateLimitError,
  RefvidError,
} from "@refvid/core";
import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "pino";
import { isConnectionLost } from "../services/store-errors.js";

interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

interface HttpLikeError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  errors?: ValidatorItem[];
}

export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      // A sync submit whose body was already started: nothing to send but the end.
      logger.error({ err, requestId: res.locals.requestId }, "error after the response started");
      res.end();
      return;
    }
    const requestId = res.locals.requestId as string | undefined;
    if (err instanceof RefvidError) return sendDomainError(res, err, requestId);
    if (isConnectionLost(err)) {
      logger.warn({ err, requestId }, "store connection lost");
      res.setHeader("Retry-After", "1");
      return res.status(503).json({
        error: {
          type: "service_unavailable",
          code: 503,
          message:
            err.committed === "unknown"
              ? "The database connection dropped while saving; the change may or may not have been made. Check before retrying (a submit with an Idempotency-Key can be retried as is)."
              : "The database connection dropped; nothing was changed. Retry in a moment.",
          request_id: requestId,
        },
      });
    }

    const e = (err ?? {}) as HttpLikeError;
    const status = e.status ?? e.statusCode ?? 500;
    if (e.type === "entity.parse.failed") {
      return sendDomainError(
        res,
        new InvalidRequestError([{ field: "body", message: "is not valid JSON", rule: "json" }]),
        requestId,
      );
    }
    if (status === 400 && Array.isArray(e.errors)) {
      const slug = modelOfRequest(req.path);
      return sendDomainError(
        res,
        new InvalidRequestError(e.errors.map((item) => toFieldProblem(item, slug))),
        requestId,
      );
    }
    if (status === 404 || status === 405) {
      const allow = (e as { headers?: Record<string, string> }).headers?.Allow;
      if (status === 405 && allow) res.setHeader("Allow", allow.toUpperCase());
      const message =
        status === 404
          ? `No route ${req.method} ${req.path}.`
          : `Method ${req.method} is not allowed on ${req.path}${allow ? `; use ${allow.toUpperCase()}` : ""}.`;
      return res.status(status).json({
        error: {
          type: status === 404 ? "not_found" : "method_not_allowed",
          code: status,
          message,
          request_id: requestId,
        },
      });
    }
    if (status === 415) {
      return res.status(415).json({
        error: {
          type: "unsupported_media_type",
          code: 415,
          message: "Send JSON with Content-Type: application/json.",
          request_id: requestId,
        },
      });
    }
    if (status >= 400 && status < 500) {
      return res.status(status).json({
        error: {
          type: "invalid_request",
          code: status,
          message: e.message ?? "invalid request",
          request_id: requestId,
        },
      });
    }
    logger.error({ err, requestId }, "unhandled error");
    return res.status(500).json({
      error: {
        type: "internal_error",
        code: 500,
        message: "Something went wrong on our side. Retry later and quote the request id if it persists.",
        request_id: requestId,
      },
    });
  };
}

function sendDomainError(res: Response, err: RefvidError, requestId: string | undefined) {
  if (err instanceof ConcurrencyLimitError) {
    // Exactly the interface's body: error.code is a string and there is no `type`.
    res.setHeader("Retry-After", "1");
    return res.status(429).json({
      error: {
        code: "concurrency_limit_exceeded",
        message: err.message,
        scope: err.scope,
        limit: err.limit,
        in_flight: err.inFlight,
      },
    });
  }
  if (err instanceof RateLimitError) {
    res.setHeader("Retry-After", String(err.retryAfterSeconds));
    return res.status(429).json({ error: "rate_limit_exceeded", message: err.message });
  }
  const body: Record<string, unknown> = { type: err.type, code: err.status, message: err.message };
  if (err instanceof InvalidRequestError) body.fields = firstPerField(err.fields);
  if (err instanceof InsufficientBalanceError) {
    body.required_usd = formatUsd(err.required);
    body.available_usd = formatUsd(err.available);
  }
  body.request_id = requestId;
  return res.status(err.status).json({ error: body });
}

/** One problem per field (a wrong type also fails its enum; the first says more). */
function firstPerField(fields: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return fields.filter((f) => !seen.has(f.field) && seen.add(f.field));
}

/** The model a submit path names, for messages that depend on it. */
function modelOfRequest(path: string): ModelSlug | undefined {
  const slug = /^\/v1\/run\/([^/]+\/[^/]+\/[^/]+)$/.exec(path)?.[1];
  return slug && isModelSlug(slug) ? slug : undefined;
}

/** `/body/input/image_urls/2` -> `body.input.image_urls[2]`, naming the property a rule is about. */
export function toFieldProblem(item: ValidatorItem, slug?: ModelSlug): FieldProblem {
  const message = item.message ?? "is invalid";
  const rule = (item.errorCode ?? "").replace(/\.openapi\.validation$/, "") || "schema";
  let path = item.path ?? "";
  // The validator reports a discriminated body (price preview) without its `body` prefix.
  if (path.startsWith("/") && !/^\/(body|query|path|headers|params)\b/.test(path))
    path = path.startsWith("/v1/") ? "/body" : `/body${path}`;
  const missing = /must have required property '([^']+)'/.exec(message);
  const named = /^'([^']+)' must be/.exec(message);
  if (named && path === "/body") path = `/body/${named[1]}`;
  const segments = path.split("/").filter(Boolean);
  if (rule === "required" && missing && segments[segments.length - 1] !== missing[1])
    segments.push(missing[1] as string);
  const field = segments.reduce(
    (acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg),
    "",
  );
  return {
    field:
      field === "headers" ? "header" : field.replace(/^headers\./, "header.").replace(/^params\./, "path."),
    message: humanize(message, field, slug),
    rule,
  };
}

function humanize(message: string, field: string, slug: ModelSlug | undefined): string {
  if (message === "must NOT have additional properties") {
    const imageField = slug ? MODELS[slug].referenceFields.image : undefined;
    return field.endsWith("input.image_url") && imageField
      ? `is not accepted; send ${imageField}: [url] instead`
      : "is not a field of this request";
  }
  if (message === 'must match pattern "^https?://"') return "must be an http or https URL";
  return message.replace(/^'[^']+' /, "");
}
