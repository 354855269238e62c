/**
 * The one place errors become responses. Named errors (core's and the HTTP layer's) carry their
 * status and type; the OpenAPI validator's errors become `400 invalid_request` with every field
 * problem named (validation-errors.ts); a full disk is a logged `503 service_unavailable` with
 * `Retry-After`; anything else is a logged `500 internal_error`, never a stack trace.
 */

import {
  BudgetExceededError,
  ConcurrencyLimitError,
  type FieldProblem,
  formatUsd,
  InsufficientBalanceError,
  InvalidRequestError,
  RateLimitError,
  RefvidError,
  UnsupportedMediaTypeError,
  UploadQuotaExceededError,
} from "@refvid/core";
import { isConnectionLost } from "@refvid/store";
import type { ErrorRequestHandler, Response } from "express";
import type { Logger } from "pino";
import { type ValidatorItem, validatorErrorToInvalidRequest } from "../catalog/schema-problems.js";
import { StorageFullError, storageFullOf } from "../storage-full.js";
import { HttpError, MethodNotAllowedError, RouteNotFoundError } from "./http-errors.js";

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
    const full = storageFullOf(err);
    if (full) {
      // Logged once, here, with what could not be written; the client hears 503, never a 500.
      logger.error(
        { requestId, code: full.code, path: full.path },
        "the disk is full; the request's bytes were not kept",
      );
      return sendDomainError(res, new StorageFullError(), requestId);
    }
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
      return sendDomainError(res, validatorErrorToInvalidRequest(e.errors, req.path), requestId);
    }
    if (status === 404) return sendDomainError(res, new RouteNotFoundError(req.method, req.path), requestId);
    if (status === 405) {
      const allow = (e as { headers?: Record<string, string> }).headers?.Allow;
      return sendDomainError(res, new MethodNotAllowedError(req.method, req.path, allow), requestId);
    }
    if (status === 415) return sendDomainError(res, new UnsupportedMediaTypeError(), requestId);
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
  if (err.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(err.retryAfterSeconds));
  if (err instanceof ConcurrencyLimitError) {
    // The interface's body (error.code is a string and there is no `type`), with the request id
    // beside its fields as in every other error body.
    res.setHeader("Retry-After", "1");
    return res.status(429).json({
      error: {
        code: "concurrency_limit_exceeded",
        message: err.message,
        scope: err.scope,
        limit: err.limit,
        in_flight: err.inFlight,
        request_id: requestId,
      },
    });
  }
  if (err instanceof RateLimitError) {
    // The interface's body, where `error` is a string: the request id sits beside it.
    return res
      .status(429)
      .json({ error: "rate_limit_exceeded", message: err.message, request_id: requestId });
  }
  if (err instanceof HttpError)
    for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  const body: Record<string, unknown> = { type: err.type, code: err.status, message: err.message };
  if (err instanceof InvalidRequestError) body.fields = firstPerField(err.fields);
  if (err instanceof InsufficientBalanceError) {
    body.required_usd = formatUsd(err.required);
    body.available_usd = formatUsd(err.available);
  }
  if (err instanceof BudgetExceededError) {
    const { standing } = err;
    body.required_usd = formatUsd(err.required);
    body.available_usd = formatUsd(standing.remaining);
    body.budget_usd = formatUsd(standing.budget.amount);
    body.spent_usd = formatUsd(standing.spent);
    body.reserved_usd = formatUsd(standing.reserved);
    body.period = standing.budget.period;
    body.resets_at = standing.resetsAt.toISOString();
    body.api_key_id = err.apiKeyId;
  }
  if (err instanceof UploadQuotaExceededError) {
    body.quota = err.quota;
    body.used = err.used;
    body.limit = err.limit;
  }
  body.request_id = requestId;
  return res.status(err.status).json({ error: body });
}

/** One problem per field (a wrong type also fails its enum; the first says more). */
function firstPerField(fields: FieldProblem[]): FieldProblem[] {
  const seen = new Set<string>();
  return fields.filter((f) => !seen.has(f.field) && seen.add(f.field));
}
