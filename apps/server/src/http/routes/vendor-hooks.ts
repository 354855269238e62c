/**
 * `POST /v1/vendor-hooks/{route}/{run_id}/{token}`: model vendors' webhooks (services/vendor-hooks.ts).
 * Before API-key authentication (a vendor has no key; the token and the vendor's signature are
 * its credentials), and read as raw bytes: signatures are over the body exactly as sent.
 */
import express, { type Router } from "express";
import type { AppDeps } from "../../deps.js";
import { receiveVendorHook } from "../../services/vendor-hooks.js";

/** fal's webhook carries the model's whole result; video results are a few KiB. */
const MAX_HOOK_BYTES = 1024 * 1024;

export function vendorHooksRoute(router: Router, deps: AppDeps): void {
  router.post(
    "/v1/vendor-hooks/:route/:run_id/:token",
    express.raw({ type: () => true, limit: MAX_HOOK_BYTES }),
    async (req, res) => {
      const headers: Record<string, string | undefined> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        headers[name] = Array.isArray(value) ? value.join(", ") : value;
      }
      const answer = await receiveVendorHook(deps, {
        route: req.params.route as string,
        runId: req.params.run_id as string,
        token: req.params.token as string,
        hook: { headers, body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0) },
      });
      if (answer.status === 200) {
        res.status(200).json({ received: true });
        return;
      }
      res.status(answer.status).json({
        error: {
          type: answer.status === 404 ? "not_found" : "unauthorized",
          code: answer.status,
          message: answer.message,
          request_id: res.locals.requestId,
        },
      });
    },
  );
}
