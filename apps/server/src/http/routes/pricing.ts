/** The pricing route: what a run would cost, before it is submitted. */
import type { PricePreviewRequest } from "@refvid/api-types";
import type { Router } from "express";
import { previewPrice } from "../../services/preview-price.js";

/** `POST /v1/pricing/preview`; its body was checked by `validatePreviewBody` (preview-validator.ts). */
export function pricingRoutes(router: Router): void {
  router.post("/v1/pricing/preview", (req, res) => {
    res.status(201).json(previewPrice(req.body as PricePreviewRequest));
  });
}
