/**
 * `POST /v1/vendor-hooks/{route}/{run_id}/{token}`: model vendors' webhooks (services/vendor-hooks.ts).
 * Before API-key authentication (a vendor has no key; the token and the vendor's signature are
 * its credentials), and read as raw bytes: signatures are over the body exactly as sent. The body is
 * read only once the token verified, up to the route's vendor's limit.
 */
import express, { type RequestHandler, type Response, type Router } from "express";
import type { AppDeps } from "../../deps.js";
import { receiveVendorHook, type VendorHookAnswer, vendorHookTarget } from "../../services/vendor-hooks.js";

/** fal's webhook carries the model's whole result; video results are a few KiB. */
const MAX_HOOK_BYTES = 1024 * 1024;

export function vendorHooksRoute(router: Router, deps: AppDeps): void {
  const parsers = new Map<number, RequestHandler>();
  const rawBody = (limit: number) => {
    const parser = parsers.get(limit) ?? express.raw({ type: () => true, limit });
    parsers.set(limit, parser);
    return parser;
  };
  router.post("/v1/vendor-hooks/:route/:run_id/:token", async (req, res, next) => {
    const target = await vendorHookTarget(deps, {
      route: req.params.route as string,
      runId: req.params.run_id as string,
      token: req.params.token as string,
    });
    if ("status" in target) return refuse(res, target);
    rawBody(target.provider.hookBodyLimit ?? MAX_HOOK_BYTES)(req, res, async (err?: unknown) => {
      if (err) return next(err);
      try {
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(req.headers)) {
          headers[name] = Array.isArray(value) ? value.join(", ") : value;
        }
        const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        const answer = await receiveVendorHook(deps, target, { headers, body });
        if (answer.status === 200) res.status(200).json({ received: true });
        else refuse(res, answer);
      } catch (failure) {
        next(failure);
      }
    });
  });
}

function refuse(res: Response, answer: Exclude<VendorHookAnswer, { status: 200 }>): void {
  res.status(answer.status).json({
    error: {
      type: answer.status === 404 ? "not_found" : "unauthorized",
      code: answer.status,
      message: answer.message,
      request_id: res.locals.requestId,
    },
  });
}
