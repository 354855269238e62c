/** The pricing route: what a run would cost, before it is submitted. */
import type { PricePreviewRequest } from "@refvid/api-types";
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import { previewPrice } from "../../services/preview-price.js";

/** `POST /v1/pricing/preview`; its body was checked by `validatePreviewBody` (preview-validator.ts). */
export function pricingRoutes(router: Router, deps: AppDeps): void {
  router.post("/v1/pricing/preview", async (req, res) => {
    res.status(201).json(await previewPrice(deps, req.body as PricePreviewRequest));
  });
}
