/**
 * Named errors of the HTTP layer itself (no route, wrong method, a worker-only process). Like
 * core's errors they carry their status and type; the error handler sends them.
 */
import { RefvidError } from "@refvid/core";

export abstract class HttpError extends RefvidError {
  /** Response headers that go with the error. */
  readonly headers: Record<string, string> = {};
}

export class RouteNotFoundError extends HttpError {
  readonly status = 404;
  readonly type = "not_found";
  constructor(method: string, path: string) {
    super(`No route ${method} ${path}.`);
  }
}

export class MethodNotAllowedError extends HttpError {
  readonly status = 405;
  readonly type = "method_not_allowed";
  constructor(method: string, path: string, allow?: string) {
    super(`Method ${method} is not allowed on ${path}${allow ? `; use ${allow.toUpperCase()}` : ""}.`);
    if (allow) this.headers.Allow = allow.toUpperCase();
  }
}

/** Everything but the health probes, in a process that runs only the worker side. */
export class WorkerOnlyError extends HttpError {
  readonly status = 404;
  readonly type = "not_found";
  constructor() {
    super("This process runs the worker side only (REFVID_ROLE=worker).");
  }
}

/** Anything but the probes and /metrics, on REFVID_PROBE_PORT. */
export class ProbePortOnlyError extends HttpError {
  readonly status = 404;
  readonly type = "not_found";
  constructor() {
    super("This port (REFVID_PROBE_PORT) serves /healthz, /readyz and /metrics only; the API is on PORT.");
  }
}

/**
 * A request that reached a process after it began to stop (docs/decisions.md, "Shutdown"): nothing
 * was done, so any request, a submit too, is safe to send again, and the connection is closed so
 * that the retry opens a new one, which a load balancer sends to another process.
 */
export class ShuttingDownError extends HttpError {
  readonly status = 503;
  readonly type = "service_unavailable";
  override readonly retryAfterSeconds = 1;
  constructor() {
    super(
      "This server is shutting down and took no action; send the request again (another server will answer it).",
    );
    this.headers.Connection = "close";
  }
}

/**
 * A key that already has REFVID_MAX_REQUESTS_PER_KEY requests in progress in this process
 * (key-requests.ts): nothing was done, so the request is safe to send again once one has ended.
 */
export class TooManyOpenRequestsError extends HttpError {
  readonly status = 429;
  readonly type = "too_many_open_requests";
  override readonly retryAfterSeconds = 1;
  constructor(readonly limit: number) {
    super(
      `This API key already has ${limit} requests in progress on this server, the most allowed; ` +
        "send this one again when one of them has been answered.",
    );
  }
}
