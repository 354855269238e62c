/**
 * Typed errors thrown by the client's helpers. The raw openapi-fetch client (`client.api`) never
 * throws the API errors; it returns `{ data, error, response }` as openapi-fetch always does.
 * It does throw {@link RequestTimeoutError}, which the fetch layer raises.
 */
import type { Run } from "@refvid/api-types";
import { parseRetryAfter } from "./retry-after.js";

/** One problem with one request field, as listed by a `400 invalid_request`. */
export interface FieldProblem {
  /** Dotted path of the field, e.g. `body.input.duration`. */
  field: string;
  /** What is wrong with it. */
  message: string;
  /** The rule that failed (`enum`, `maxLength`, …), when the server names it. */
  rule?: string;
}

/** Fields common to every error the API returns. */
interface RefvidErrorInit {
  status: number;
  type: string;
  message: string;
  requestId: string | undefined;
  retryAfterSeconds: number | undefined;
  body: unknown;
}

/**
 * An error response from the refvid API. Subclasses narrow it by status and `type`; catch this
 * class to handle every API error at once.
 */
export class RefvidError extends Error {
  override name = "RefvidError";
  /** HTTP status of the response. */
  readonly status: number;
  /** Machine-readable code (`run_not_found`, `rate_limit_exceeded`, …), or `http_<status>` if the body had none. */
  readonly type: string;
  /**
   * The request's id, from the `X-Request-Id` response header (or the body's `request_id` when a
   * proxy dropped the header); quote it when asking for support.
   */
  readonly requestId: string | undefined;
  /**
   * Seconds the server asked us to wait before trying again (`Retry-After`, an HTTP-date rounded
   * up), if it said: on 429s, and on 503s that say. When it is longer than the retry policy's
   * `maxRetryDelayMs`, the client throws at once instead of waiting.
   */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed response body (or its text when it was not JSON), for anything not lifted into fields. */
  readonly body: unknown;

  constructor(init: RefvidErrorInit) {
    super(init.message);
    this.status = init.status;
    this.type = init.type;
    this.requestId = init.requestId;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.body = init.body;
  }
}

/** `400 invalid_request`: the request broke a rule; `fields` lists every problem. */
export class ValidationError extends RefvidError {
  override name = "ValidationError";
  readonly fields: FieldProblem[];
  constructor(init: RefvidErrorInit, fields: FieldProblem[]) {
    super(init);
    this.fields = fields;
  }
}

/** `400 insufficient_balance`: the wallet cannot cover the run. Amounts are decimal USD strings. */
export class InsufficientBalanceError extends RefvidError {
  override name = "InsufficientBalanceError";
  readonly requiredUsd: string;
  readonly availableUsd: string;
  constructor(init: RefvidErrorInit, requiredUsd: string, availableUsd: string) {
    super(init);
    this.requiredUsd = requiredUsd;
    this.availableUsd = availableUsd;
  }
}

/** `429 concurrency_limit_exceeded`: the organization or the key already has `limit` runs in flight. */
export class ConcurrencyLimitError extends RefvidError {
  override name = "ConcurrencyLimitError";
  readonly scope: "organization" | "api_key";
  readonly limit: number;
  readonly inFlight: number;
  constructor(
    init: RefvidErrorInit,
    details: { scope: "organization" | "api_key"; limit: number; inFlight: number },
  ) {
    super(init);
    this.scope = details.scope;
    this.limit = details.limit;
    this.inFlight = details.inFlight;
  }
}

/** `429 rate_limit_exceeded`: the key made too many requests this minute; see `retryAfterSeconds`. */
export class RateLimitError extends RefvidError {
  override name = "RateLimitError";
}

/** `401 unauthorized`: the API key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends RefvidError {
  override name = "AuthenticationError";
}

/** `404`: no such run (or model, file…) in the caller's organization. */
export class NotFoundError extends RefvidError {
  override name = "NotFoundError";
}

/** `409`: e.g. `run_not_cancellable`, when cancelling a run that already ended. */
export class ConflictError extends RefvidError {
  override name = "ConflictError";
}

/**
 * `waitForRun` gave up after `timeoutMs`. This is the client's deadline, not the run's status:
 * the run itself may still be in flight (unlike a run that ended with status `timeout`).
 */
export class RunTimeoutError extends Error {
  override name = "RunTimeoutError";
  readonly runId: string;
  readonly timeoutMs: number;
  /** The last state seen before giving up, if any poll completed. */
  readonly lastRun: Run | undefined;
  constructor(runId: string, timeoutMs: number, lastRun: Run | undefined) {
    super(
      `run ${runId} did not reach a terminal status within ${timeoutMs} ms` +
        (lastRun ? ` (last status: ${lastRun.status})` : ""),
    );
    this.runId = runId;
    this.timeoutMs = timeoutMs;
    this.lastRun = lastRun;
  }
}

/**
 * A request (one attempt, body included) took longer than `timeoutMs`, and retries, if any, did
 * too. Distinct from the caller's own abort, which rejects with the signal's reason instead.
 */
export class RequestTimeoutError extends Error {
  override name = "RequestTimeoutError";
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`the request did not complete within ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `run()` saw the run end `failed` or `timeout` (its `error` says why). The request succeeded:
 * this is the run's outcome, carried whole in `run`. Pass `throwOnFailure: false` to get such
 * runs back instead.
 */
export class RunFailedError extends Error {
  override name = "RunFailedError";
  readonly run: Run;
  constructor(run: Run) {
    const reason = run.error ? `: ${run.error.message} (${run.error.type})` : "";
    super(`run ${run.run_id} ended ${run.status}${reason}`);
    this.run = run;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === "string" && value !== "" ? value : fallback;
}

function toFieldProblems(value: unknown): FieldProblem[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isRecord).map((p) => {
    const problem: FieldProblem = { field: stringOr(p.field, ""), message: stringOr(p.message, "") };
    if (typeof p.rule === "string") problem.rule = p.rule;
    return problem;
  });
}

/**
 * Builds the typed error for a non-2xx response. `body` is what openapi-fetch parsed: JSON when it
 * could, else the raw text (or `undefined` for an empty body), so every shape is handled defensively.
 */
export function errorFromResponse(response: Response, body: unknown): RefvidError {
  const status = response.status;
  const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
  // Retry-After is documented in seconds; expose it as such, rounding an HTTP-date up.
  const retryAfterSeconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
  const headerRequestId = response.headers.get("x-request-id") || undefined;
  const fallbackMessage = `HTTP ${status}${response.statusText ? ` ${response.statusText}` : ""}`;

  // The rate-limit 429 keeps a legacy shape: `error` is a string and `message` sits beside it.
  if (isRecord(body) && typeof body.error === "string") {
    const init: RefvidErrorInit = {
      status,
      type: body.error,
      message: stringOr(body.message, body.error),
      requestId: headerRequestId ?? (typeof body.request_id === "string" ? body.request_id : undefined),
      retryAfterSeconds,
      body,
    };
    if (status === 429) return new RateLimitError(init);
    return new RefvidError(init);
  }

  const err = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  // The concurrency 429 keeps a legacy shape too: the machine code sits in `code`, not `type`.
  const type = err
    ? stringOr(err.type, typeof err.code === "string" ? err.code : `http_${status}`)
    : `http_${status}`;
  const init: RefvidErrorInit = {
    status,
    type,
    message: err ? stringOr(err.message, fallbackMessage) : stringOr(body, fallbackMessage),
    requestId: headerRequestId ?? (typeof err?.request_id === "string" ? err.request_id : undefined),
    retryAfterSeconds,
    body,
  };

  if (status === 429 && err?.code === "concurrency_limit_exceeded") {
    return new ConcurrencyLimitError(init, {
      scope: err.scope === "api_key" ? "api_key" : "organization",
      limit: typeof err.limit === "number" ? err.limit : 0,
      inFlight: typeof err.in_flight === "number" ? err.in_flight : 0,
    });
  }
  if (status === 429) return new RateLimitError(init);
  if (status === 400 && type === "insufficient_balance") {
    return new InsufficientBalanceError(
      init,
      stringOr(err?.required_usd, ""),
      stringOr(err?.available_usd, ""),
    );
  }
  if (status === 400) return new ValidationError(init, toFieldProblems(err?.fields));
  if (status === 401) return new AuthenticationError(init);
  if (status === 404) return new NotFoundError(init);
  if (status === 409) return new ConflictError(init);
  return new RefvidError(init);
}
