/**
 * Request id and one structured log line per request, and the request's timing handed to the
 * metrics, from one `close` listener (it comes after `finish`, and also when the client left
 * first, which the line then says).
 */
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { newRequestId } from "../ids.js";
import type { RequestObserver } from "../metrics/http-metrics.js";

const SAFE_ID = /^[A-Za-z0-9._-]{1,100}$/;

export function requestLog(logger: Logger, observe?: RequestObserver): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get("x-request-id");
    const requestId = incoming && SAFE_ID.test(incoming) ? incoming : newRequestId();
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    res.once("close", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      observe?.(req, res, ms / 1000);
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
          ...(res.writableFinished ? {} : { aborted: true }),
        },
        "request",
      );
    });
    next();
  };
}
