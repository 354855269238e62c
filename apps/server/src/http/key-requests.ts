/**
 * REFVID_MAX_REQUESTS_PER_KEY: how many requests one API key may have in progress in this
 * process, so that one key cannot hold every connection the server takes (docs/decisions.md,
 * "Requests at the edge"). A request is in progress from its authentication until its response
 * closes: an upload while its body arrives, a sync submit while it waits for its run, a download
 * while it is read. Run event streams are left to their own cap (REFVID_MAX_STREAMS_PER_KEY). One
 * past the limit is refused with `429 too_many_open_requests` and `Retry-After`, before its body
 * is read.
 */
import type { Request, RequestHandler } from "express";
import { callerOf } from "./auth.js";
import { TooManyOpenRequestsError } from "./http-errors.js";

/** `GET /v1/runs/{run_id}/events`, which REFVID_MAX_STREAMS_PER_KEY caps instead. */
const EVENT_STREAM = /^\/v1\/runs\/[^/]+\/events\/?$/;
const isEventStream = (req: Request) => req.method === "GET" && EVENT_STREAM.test(req.baseUrl + req.path);

/** After `authenticate`: counts the key's requests in progress, and refuses one past `max` (0: no limit). */
export function limitRequestsPerKey(max: number): RequestHandler {
  const open = new Map<string, number>();
  return (req, res, next) => {
    if (max <= 0 || isEventStream(req)) return next();
    const keyId = callerOf(res).apiKey.id;
    const held = open.get(keyId) ?? 0;
    if (held >= max) return next(new TooManyOpenRequestsError(max));
    open.set(keyId, held + 1);
    res.once("close", () => {
      const left = (open.get(keyId) ?? 1) - 1;
      if (left > 0) open.set(keyId, left);
      else open.delete(keyId);
    });
    next();
  };
}
