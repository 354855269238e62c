/**
 * The API's routes, one file per resource, on one router. Most-used first: Express tries routes in
 * order, so polls and submits meet the fewest; and one router rather than one per resource, since
 * each router a request enters costs a dispatch (a separate router each cost the price preview
 * about a tenth of its throughput in `npm run bench`). No two resources' paths overlap.
 */
import { Router } from "express";
import type { AppDeps } from "../../deps.js";
import type { Drain } from "../drain.js";
import { accountRoutes } from "./account.js";
import { adminRoutes } from "./admin.js";
import { ledgerRoutes } from "./ledger.js";
import { modelsRoutes } from "./models.js";
import { pricingRoutes } from "./pricing.js";
import { runsRoutes } from "./runs.js";
import { uploadsRoutes } from "./uploads.js";
import { usageRoutes } from "./usage.js";
import { webhooksRoutes } from "./webhooks.js";

export function apiRouter(deps: AppDeps, drain: Drain): Router {
  const router = Router();
  runsRoutes(router, deps, drain);
  accountRoutes(router, deps);
  pricingRoutes(router, deps);
  modelsRoutes(router, deps);
  webhooksRoutes(router, deps);
  uploadsRoutes(router, deps);
  ledgerRoutes(router, deps);
  usageRoutes(router, deps);
  adminRoutes(router, deps);
  return router;
}
