/** Routes of the webhook API: the signing secret and its rotation, the delivery log, redelivery. */
import type { Request, Router } from "express";
import type { AppDeps } from "../../deps.js";
import { getAlertSettings, updateAlertSettings } from "../../services/alert-settings.js";
import { getVideoWebhook, updateVideoWebhook } from "../../services/video-webhook.js";
import {
  type DeliveryQuery,
  getDelivery,
  listDeliveries,
  redeliver,
} from "../../services/webhook-deliveries.js";
import { rotateWebhookSecret, webhookSecret } from "../../services/webhook-secret.js";
import { callerOf } from "../auth.js";

export function webhooksRoutes(router: Router, deps: AppDeps): void {
  router.get("/v1/webhooks/secret", async (_req, res) => {
    res.json(await webhookSecret(deps, callerOf(res)));
  });

  router.post("/v1/webhooks/secret/rotate", async (_req, res) => {
    res.json(await rotateWebhookSecret(deps, callerOf(res)));
  });

  router.get("/v1/webhooks/alerts", async (_req, res) => {
    res.json(await getAlertSettings(deps, callerOf(res)));
  });

  router.patch("/v1/webhooks/alerts", async (req, res) => {
    res.json(await updateAlertSettings(deps, callerOf(res), req.body));
  });

  router.get("/v1/webhooks/videos", async (_req, res) => {
    res.json(await getVideoWebhook(deps, callerOf(res)));
  });

  router.patch("/v1/webhooks/videos", async (req, res) => {
    res.json(await updateVideoWebhook(deps, callerOf(res), req.body));
  });

  router.get("/v1/webhooks/deliveries", async (req, res) => {
    res.json(await listDeliveries(deps, callerOf(res), deliveryQuery(req)));
  });

  router.get("/v1/webhooks/deliveries/:delivery_id", async (req, res) => {
    res.json(await getDelivery(deps, callerOf(res), req.params.delivery_id));
  });

  router.post("/v1/webhooks/deliveries/:delivery_id/redeliver", async (req, res) => {
    res.status(202).json(await redeliver(deps, callerOf(res), req.params.delivery_id));
  });
}

/** The listing's query, checked against the spec (and `limit` made a number) by the OpenAPI validator. */
function deliveryQuery(req: Request): DeliveryQuery {
  const one = (name: string) => {
    const value = req.query[name];
    return typeof value === "string" ? value : undefined;
  };
  const limit = req.query.limit;
  return {
    runId: one("run_id"),
    state: one("state") as DeliveryQuery["state"],
    limit: limit === undefined ? undefined : Number(limit),
    cursor: one("cursor"),
  };
}
