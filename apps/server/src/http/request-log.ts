/** Request id and one structured log line per request. */
import type { RequestHandler } from "express";
import type { Logger } from "pino";
import { newRequestId } from "../ids.js";

const SAFE_ID = /^[A-Za-z0-9._-]{1,100}$/;

export function requestLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get("x-request-id");
    const requestId = incoming && SAFE_ID.test(incoming) ? incoming : newRequestId();
    res.locals.requestId = requestId;
    res.setHeader("X-Request-Id", requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      logger.info(
        {
          requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Math.round(ms * 10) / 10,
        },
        "request",
      );
    });
    next();
  };
}
