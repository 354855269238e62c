/**
 * Spend alerts as both stores raise them (core's alerts.ts decides): each check changes the
 * organization's or key's alert state in place, as the caller's transaction will write it, and
 * returns the deliveries to queue (none without an alert webhook URL).
 */
import { randomUUID } from "node:crypto";
import {
  type AlertType,
  alertPayload,
  type BalanceLowAlert,
  type BudgetAlert,
  balanceCrossings,
  budgetAlerts,
  DEFAULT_BALANCE_THRESHOLDS,
  type Micros,
  rearmBalance,
} from "@refvid/core";
import type { ApiKeyRecord, Environment, OrganizationRecord } from "./types.js";

/** An alert's delivery, queued with the change that raised it. */
export interface NewAlertDelivery {
  id: string;
  organizationId: string;
  environment: Environment;
  url: string;
  eventType: AlertType;
  payload: string;
  createdAt: Date;
}

function deliveriesOf(
  org: OrganizationRecord,
  environment: Environment,
  alerts: (BalanceLowAlert | (BudgetAlert & { apiKeyId: string }))[],
  now: Date,
): NewAlertDelivery[] {
  const url = org.alerts.webhookUrl;
  if (!url) return [];
  return alerts.map((alert) => ({
    id: `msg_alert_${randomUUID().replaceAll("-", "")}`,
    organizationId: org.id,
    environment,
    url,
    eventType: alert.kind,
    payload: alertPayload(alert, org.id, environment, now),
    createdAt: now,
  }));
}

/** The wallet's alerts for a fall of its available balance from `before` to what it is now. */
export function walletAlerts(org: OrganizationRecord, before: Micros, now: Date): NewAlertDelivery[] {
  const { alerts, fired } = balanceCrossings(
    {
      thresholds: org.alerts.thresholds ?? DEFAULT_BALANCE_THRESHOLDS,
      lastTopUp: org.alerts.lastTopUp,
      fired: org.alerts.fired,
    },
    before,
    org.balance - org.reserved,
  );
  org.alerts.fired = fired;
  return deliveriesOf(org, "live", alerts, now);
}

/** After money came in: the thresholds the available balance is back above are armed again. */
export function rearmWallet(org: OrganizationRecord): void {
  org.alerts.fired = rearmBalance(org.alerts.fired, org.balance - org.reserved);
}

/** A key's budget alerts for what it spends and holds now, or for a submit refused by its budget. */
export function keyAlerts(
  org: OrganizationRecord,
  key: ApiKeyRecord,
  now: Date,
  refused = false,
): NewAlertDelivery[] {
  const { alerts, state } = budgetAlerts(key.budget, key.spend, key.budgetAlert, now, refused);
  key.budgetAlert = state;
  const withKey = alerts.map((alert) => ({ ...alert, apiKeyId: key.id }));
  return deliveriesOf(org, key.environment, withKey, now);
}
