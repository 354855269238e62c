/**
 * Named errors of the domain. Each carries the HTTP status and machine-readable type of
 * the API's error bodies; only the server's error handler turns them into responses.
 */
import type { BudgetStanding } from "./budgets.js";
import type { FieldProblem } from "./model-rules.js";
import { formatUsd, type Micros } from "./money.js";

export abstract class RefvidError extends Error {
  abstract readonly status: number;
  abstract readonly type: string;
  /** When to try again, sent as `Retry-After`; most errors have none. */
  readonly retryAfterSeconds?: number;
}

export class InvalidRequestError extends RefvidError {
  readonly status = 400;
  readonly type = "invalid_request";
  constructor(readonly fields: FieldProblem[]) {
    const first = fields[0];
    super(first ? `${first.field}: ${first.message}` : "invalid request");
  }
}

export class InsufficientBalanceError extends RefvidError {
  readonly status = 400;
  readonly type = "insufficient_balance";
  constructor(
    readonly required: Micros,
    readonly available: Micros,
  ) {
    super(
      `This run needs ${formatUsd(required)} USD but ${formatUsd(available)} USD is available. ` +
        "Top up the wallet or lower the duration or resolution.",
    );
  }
}

/**
 * `400 budget_exceeded`: the run's price would take the key past its budget for the period. The body
 * has the shape of the insufficient-balance error, with the budget's figures beside it.
 */
export class BudgetExceededError extends RefvidError {
  readonly status = 400;
  readonly type = "budget_exceeded";
  constructor(
    readonly apiKeyId: string,
    readonly required: Micros,
    readonly standing: BudgetStanding,
  ) {
    const { budget, spent, reserved, remaining, resetsAt } = standing;
    super(
      `This run needs ${formatUsd(required)} USD but ${formatUsd(remaining)} USD is left of this API key's ` +
        `budget of ${formatUsd(budget.amount)} USD a ${budget.period} (${formatUsd(spent + reserved)} USD spent or held); ` +
        `it resets at ${resetsAt.toISOString()}. Raise the budget or lower the duration or resolution.`,
    );
  }
}

/** 429 whose body is the interface's `{error: {code: "concurrency_limit_exceeded", …}}`, plus `error.request_id`. */
export class ConcurrencyLimitError extends RefvidError {
  readonly status = 429;
  readonly type = "concurrency_limit_exceeded";
  constructor(
    readonly scope: "organization" | "api_key",
    readonly limit: number,
    readonly inFlight: number,
  ) {
    super(
      `${scope === "organization" ? "Organization" : "API key"} concurrency limit reached: ` +
        `${inFlight} of ${limit} runs in flight. Retry when a run ends.`,
    );
  }
}

/** 429 whose body is the interface's `{error: "rate_limit_exceeded", message}`, plus `request_id` beside them. */
export class RateLimitError extends RefvidError {
  readonly status = 429;
  readonly type = "rate_limit_exceeded";
  constructor(
    readonly limit: number,
    override readonly retryAfterSeconds: number,
  ) {
    super(`Rate limit of ${limit} requests per minute exceeded. Retry after ${retryAfterSeconds} s.`);
  }
}

export class UnauthorizedError extends RefvidError {
  readonly status = 401;
  readonly type = "unauthorized";
}

export class NotFoundError extends RefvidError {
  readonly status = 404;
  constructor(
    readonly type:
      | "model_not_found"
      | "run_not_found"
      | "file_not_found"
      | "organization_not_found"
      | "api_key_not_found"
      | "video_not_found"
      | "variant_not_found"
      | "not_found",
    message: string,
  ) {
    super(message);
  }
}

export class ForbiddenError extends RefvidError {
  readonly status = 403;
  constructor(
    readonly type: "admin_api_disabled" | "invalid_file_signature" | "file_url_expired" | "live_key_required",
    message: string,
  ) {
    super(message);
  }
}

export class RangeNotSatisfiableError extends RefvidError {
  readonly status = 416;
  readonly type = "range_not_satisfiable";
}

export class ConflictError extends RefvidError {
  readonly status = 409;
  constructor(
    readonly type:
      | "run_not_cancellable"
      | "top_up_already_reversed"
      | "insufficient_available_balance"
      | "video_not_completed",
    message: string,
  ) {
    super(message);
  }
}

export class IdempotencyKeyReusedError extends RefvidError {
  readonly status = 422;
  readonly type = "idempotency_key_reused";
  constructor() {
    super("This Idempotency-Key was used with a different request body. Use a new key for a new request.");
  }
}

/** The operator's catalog file cannot be put in service; the message lists each problem. */
export class CatalogInvalidError extends RefvidError {
  readonly status = 422;
  readonly type = "catalog_invalid";
}

/** A body of a media type the endpoint does not take. */
export class UnsupportedMediaTypeError extends RefvidError {
  readonly status = 415;
  readonly type = "unsupported_media_type";
  constructor(message = "Send JSON with Content-Type: application/json.") {
    super(message);
  }
}

/** A key holds REFVID_MAX_STREAMS_PER_KEY run event streams open already; sent with `Retry-After`. */
export class TooManyStreamsError extends RefvidError {
  readonly status = 429;
  readonly type = "too_many_streams";
  override readonly retryAfterSeconds = 5;
  constructor(readonly limit: number) {
    super(
      `This API key already holds ${limit} open run event streams, the most allowed. ` +
        "Close one, or poll GET /v1/runs/{run_id} instead.",
    );
  }
}

/**
 * 413: an upload would take its organization past its upload quota (bytes or count); nothing of it
 * is kept. The body names the quota, what the organization's kept uploads use and the limit.
 */
export class UploadQuotaExceededError extends RefvidError {
  readonly status = 413;
  readonly type = "upload_quota_exceeded";
  constructor(
    readonly quota: "bytes" | "count",
    readonly used: number,
    readonly limit: number,
  ) {
    super(
      (quota === "count"
        ? `The organization keeps ${used} uploads; its upload count quota is ${limit}.`
        : `This upload would take the organization's uploads past its upload bytes quota of ${sizeOf(limit)}; ${sizeOf(used)} are in use.`) +
        " Delete uploads no longer needed (DELETE /v1/files/{file_id}) or wait for them to expire, or ask the operator for a larger quota.",
    );
  }
}

const UNITS: readonly [number, string][] = [
  [1024 ** 3, "GiB"],
  [1024 ** 2, "MiB"],
  [1024, "KiB"],
];
/** `5368709120 bytes (5.0 GiB)`: exact, and readable. */
function sizeOf(bytes: number): string {
  const unit = UNITS.find(([size]) => bytes >= size);
  return unit ? `${bytes} bytes (${(bytes / unit[0]).toFixed(1)} ${unit[1]})` : `${bytes} bytes`;
}
