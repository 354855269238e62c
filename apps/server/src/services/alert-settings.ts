/**
 * Where an organization's spend alerts go and its wallet thresholds (core's alerts.ts): read by any
 * of its keys, changed by a live key (`/v1/webhooks/alerts`) or the operator (the organization's
 * PATCH in the admin API).
 */
import type { components } from "@refvid/api-types";
import {
  type BalanceThreshold,
  DEFAULT_BALANCE_THRESHOLDS,
  ForbiddenError,
  formatUsd,
  InvalidRequestError,
  parseUsd,
  UnauthorizedError,
} from "@refvid/core";
import type { OrganizationPatch, OrganizationRecord } from "@refvid/store";
import type { Caller } from "../auth/request-context.js";
import type { AppDeps } from "../deps.js";
import { checkWebhookUrl } from "./webhook-url.js";

type Schemas = components["schemas"];

export function alertSettingsView(org: OrganizationRecord): Schemas["AlertSettings"] {
  return {
    webhook_url: org.alerts.webhookUrl,
    balance_thresholds: (org.alerts.thresholds ?? DEFAULT_BALANCE_THRESHOLDS).map((t) =>
      "amount" in t ? { amount_usd: formatUsd(t.amount) } : { percent_of_last_top_up: t.percentOfLastTopUp },
    ),
  };
}

/** The store's patch for the settings a request changes; `field` names them in a 400 (`body.alerts`). */
export function alertPatch(
  deps: AppDeps,
  body: Schemas["UpdateAlertSettingsRequest"],
  field: string,
): Pick<OrganizationPatch, "alertWebhookUrl" | "balanceAlertThresholds"> {
  const patch: Pick<OrganizationPatch, "alertWebhookUrl" | "balanceAlertThresholds"> = {};
  if (body.webhook_url !== undefined) {
    if (body.webhook_url !== null) {
      const problems = checkWebhookUrl(body.webhook_url, deps.config.allowLocalUrls, `${field}.webhook_url`);
      if (problems.length > 0) throw new InvalidRequestError(problems);
    }
    patch.alertWebhookUrl = body.webhook_url;
  }
  if (body.balance_thresholds !== undefined) {
    patch.balanceAlertThresholds =
      body.balance_thresholds === null
        ? null
        : body.balance_thresholds.map((t, i): BalanceThreshold => {
            if ("percent_of_last_top_up" in t) return { percentOfLastTopUp: t.percent_of_last_top_up };
            const amount = parseUsd(t.amount_usd);
            if (amount === null || amount <= 0) {
              throw new InvalidRequestError([
                {
                  field: `${field}.balance_thresholds.${i}.amount_usd`,
                  message: "must be a positive amount in USD",
                  rule: "amount",
                },
              ]);
            }
            return { amount };
          });
  }
  return patch;
}

export async function getAlertSettings(deps: AppDeps, caller: Caller): Promise<Schemas["AlertSettings"]> {
  const org = await deps.store.getOrganization(caller.organization.id);
  return alertSettingsView(org ?? caller.organization);
}

export async function updateAlertSettings(
  deps: AppDeps,
  caller: Caller,
  body: Schemas["UpdateAlertSettingsRequest"],
): Promise<Schemas["AlertSettings"]> {
  if (caller.apiKey.environment !== "live") {
    throw new ForbiddenError(
      "live_key_required",
      "A test key may read the alert settings but not change them: they are the organization's. Use a live key.",
    );
  }
  const org = await deps.store.updateOrganization(caller.organization.id, alertPatch(deps, body, "body"));
  if (!org) throw new UnauthorizedError("This API key's organization no longer exists.");
  return alertSettingsView(org);
}
