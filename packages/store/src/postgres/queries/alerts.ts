import type { NewAlertDelivery } from "../../alert-deliveries.js";
import type * as T from "../../types.js";
import type { Queryable } from "../database.js";
import { json } from "./sql.js";

/**
 * Keeps the spend-alert state a change left on its organizations and keys, and queues the alerts'
 * deliveries, in the caller's transaction. Written only when some alert state moved: rare, so the
 * hot path pays nothing for it.
 */
export async function writeAlerts(
  tx: Queryable,
  change: {
    organizations: readonly T.OrganizationRecord[];
    keys: readonly T.ApiKeyRecord[];
    deliveries: readonly NewAlertDelivery[];
  },
): Promise<void> {
  const { organizations, keys, deliveries } = change;
  await tx.query(
    `with o as (update organizations o set balance_alerts_fired = d.fired
         from unnest($1::text[], $2::jsonb[]) as d (id, fired) where o.id = d.id),
       k as (update api_keys k set budget_alert_level = d.level, budget_alert_period_start = d.period_start
         from unnest($3::text[], $4::smallint[], $5::timestamptz[]) as d (id, level, period_start) where k.id = d.id)
     insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, payload,
       next_attempt_at, state)
     select id, null, organization_id, environment, created_at, url, event_type, payload, created_at, 'pending'
     from unnest($6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::text[], $11::text[], $12::text[])
       as n (id, organization_id, environment, created_at, url, event_type, payload)`,
    [
      organizations.map((o) => o.id),
      organizations.map((o) => json(o.alerts.fired)),
      keys.map((k) => k.id),
      keys.map((k) => k.budgetAlert.level),
      keys.map((k) => k.budgetAlert.periodStart),
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.organizationId),
      deliveries.map((d) => d.environment),
      deliveries.map((d) => d.createdAt),
      deliveries.map((d) => d.url),
      deliveries.map((d) => d.eventType),
      deliveries.map((d) => d.payload),
    ],
  );
}
