/** The admin API. Authenticated by `authenticateAdmin`. */
import { Router } from "express";
import type { AppDeps } from "../deps.js";
import * as admin from "../services/admin.js";

export function adminRouter(deps: AppDeps): Router {
  const router = Router();
  router.post("/admin/v1/organizations", async (req, res) => {
    res.status(201).json(await admin.createOrganization(deps, req.body));
  });
  router.get("/admin/v1/organizations/:organization_id", async (req, res) => {
    res.json(await admin.getOrganization(deps, req.params.organization_id));
  });
  router.post("/admin/v1/organizations/:organization_id/api-keys", async (req, res) => {
    res.status(201).json(await admin.createApiKey(deps, req.params.organization_id, req.body ?? {}));
  });
  router.post("/admin/v1/organizations/:organization_id/top-ups", async (req, res) => {
    res.status(201).json(await admin.createTopUp(deps, req.params.organization_id, req.body));
  });
  router.patch("/admin/v1/api-keys/:api_key_id", async (req, res) => {
    res.json(await admin.updateApiKey(deps, req.params.api_key_id, req.body));
  });
  router.delete("/admin/v1/api-keys/:api_key_id", async (req, res) => {
    res.json(await admin.revokeApiKey(deps, req.params.api_key_id));
  });
  return router;
}
