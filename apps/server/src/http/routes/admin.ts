/** The admin API. Authenticated by `authenticateAdmin`. */

import type { UsageGroupBy } from "@refvid/store";
import type { Router } from "express";
import type { AppDeps } from "../../deps.js";
import * as admin from "../../services/admin.js";
import { listApiKeys, listOrganizations, listTopUps, mustExist } from "../../services/admin-lists.js";
import * as money from "../../services/admin-money.js";
import { adminSearchRuns } from "../../services/admin-runs.js";
import { getUsage } from "../../services/admin-usage.js";
import { adminVendorLog } from "../../services/admin-vendor-log.js";
import { reloadCatalog } from "../../services/catalog.js";
import { adminActorOf } from "../auth.js";
import { ledgerQuery, pageQuery, queryText } from "../query-text.js";

export function adminRoutes(router: Router, deps: AppDeps): void {
  router.get("/admin/v1/organizations", async (req, res) => {
    res.json(await listOrganizations(deps, { ...pageQuery(req), name: queryText(req, "name") }));
  });
  router.post("/admin/v1/organizations", async (req, res) => {
    res.status(201).json(await admin.createOrganization(deps, adminActorOf(res), req.body));
  });
  router.get("/admin/v1/organizations/:organization_id", async (req, res) => {
    res.json(await admin.getOrganization(deps, req.params.organization_id));
  });
  router.patch("/admin/v1/organizations/:organization_id", async (req, res) => {
    res.json(await admin.updateOrganization(deps, adminActorOf(res), req.params.organization_id, req.body));
  });
  router.get("/admin/v1/organizations/:organization_id/api-keys", async (req, res) => {
    const revoked = queryText(req, "revoked");
    res.json(
      await listApiKeys(deps, req.params.organization_id, {
        ...pageQuery(req),
        revoked: revoked === undefined ? undefined : revoked === "true",
      }),
    );
  });
  router.post("/admin/v1/organizations/:organization_id/api-keys", async (req, res) => {
    res
      .status(201)
      .json(await admin.createApiKey(deps, adminActorOf(res), req.params.organization_id, req.body ?? {}));
  });
  router.get("/admin/v1/organizations/:organization_id/top-ups", async (req, res) => {
    res.json(await listTopUps(deps, req.params.organization_id, pageQuery(req)));
  });
  router.post("/admin/v1/organizations/:organization_id/top-ups", async (req, res) => {
    const key = req.get("idempotency-key");
    const made = await money.createTopUp(deps, adminActorOf(res), req.params.organization_id, req.body, key);
    if (made.replayed) res.setHeader("Idempotent-Replayed", "true");
    res.status(made.replayed ? 200 : 201).json(made.topUp);
  });
  router.post("/admin/v1/organizations/:organization_id/top-ups/:top_up_id/reversal", async (req, res) => {
    const { organization_id: organizationId, top_up_id: topUpId } = req.params;
    res
      .status(201)
      .json(await money.reverseTopUp(deps, adminActorOf(res), organizationId, topUpId, req.body));
  });
  router.post("/admin/v1/organizations/:organization_id/adjustments", async (req, res) => {
    res
      .status(201)
      .json(await money.adjustBalance(deps, adminActorOf(res), req.params.organization_id, req.body));
  });
  router.get("/admin/v1/ledger", async (req, res) => {
    const organizationId = queryText(req, "organization_id");
    if (organizationId !== undefined) await mustExist(deps, organizationId);
    res.json(await money.listLedger(deps, organizationId, ledgerQuery(req)));
  });
  router.get("/admin/v1/audit", async (req, res) => {
    res.json(
      await money.listAudit(deps, {
        ...pageQuery(req),
        organizationId: queryText(req, "organization_id"),
        actor: queryText(req, "actor"),
      }),
    );
  });
  router.patch("/admin/v1/api-keys/:api_key_id", async (req, res) => {
    res.json(await admin.updateApiKey(deps, adminActorOf(res), req.params.api_key_id, req.body));
  });
  router.delete("/admin/v1/api-keys/:api_key_id", async (req, res) => {
    res.json(await admin.revokeApiKey(deps, adminActorOf(res), req.params.api_key_id));
  });
  router.get("/admin/v1/usage", async (req, res) => {
    res.json(
      await getUsage(deps, {
        groupBy: queryText(req, "group_by") as UsageGroupBy,
        from: queryText(req, "from"),
        to: queryText(req, "to"),
        organizationId: queryText(req, "organization_id"),
      }),
    );
  });
  router.post("/admin/v1/runs/search", async (req, res) => {
    res.json(await adminSearchRuns(deps, req.body ?? {}));
  });
  router.post("/admin/v1/catalog/reload", (_req, res) => {
    res.json(reloadCatalog(deps));
  });
  router.get("/admin/v1/runs/:run_id/vendor-log", async (req, res) => {
    res.json(await adminVendorLog(deps, req.params.run_id as string));
  });
}
