/**
 * `GET /metrics`: this process's Prometheus metrics in the text exposition format. Open unless
 * REFVID_METRICS_TOKEN is set, then `Authorization: Bearer <token>`. It takes no API key, so it is
 * never rate limited; every process serves it, workers included.
 */
import { timingSafeEqual } from "node:crypto";
import { UnauthorizedError } from "@refvid/core";
import type { RequestHandler } from "express";
import type { AppDeps } from "../../deps.js";

const BEARER = /^Bearer (\S+)$/i;

export function metricsRoute(deps: AppDeps): RequestHandler {
  const token = deps.config.metricsToken ? Buffer.from(deps.config.metricsToken) : null;
  return async (req, res, next) => {
    if (token) {
      const header = (req.get("authorization") ?? "").trim();
      const given = Buffer.from(BEARER.exec(header)?.[1] ?? "");
      if (given.length !== token.length || !timingSafeEqual(given, token)) {
        res.setHeader("WWW-Authenticate", 'Bearer realm="metrics"');
        return next(
          new UnauthorizedError(
            "Missing or invalid metrics token. Send Authorization: Bearer $REFVID_METRICS_TOKEN.",
          ),
        );
      }
    }
    const text = await deps.metrics.scrape(deps);
    res.setHeader("Cache-Control", "no-store");
    res.type(deps.metrics.registry.contentType).send(text);
  };
}
