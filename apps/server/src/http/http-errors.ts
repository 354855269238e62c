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
