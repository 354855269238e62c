import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

/** A part of the quota left out of the patch keeps its value; null returns it to the default. */
export async function updateOrganization(
  db: Database,
  id: string,
  patch: T.OrganizationPatch,
): ReturnType<T.Store["updateOrganization"]> {
  const quota = patch.uploadQuota ?? {};
  const { rows } = await db.query(
    `update organizations set
       upload_quota_bytes = case when $2 then $3::bigint else upload_quota_bytes end,
       upload_quota_count = case when $4 then $5::integer else upload_quota_count end,
       queue_weight = coalesce($6, queue_weight),
       alert_webhook_url = case when $7 then $8::text else alert_webhook_url end,
       balance_alert_thresholds = case when $9 then $10::jsonb else balance_alert_thresholds end,
       video_webhook_url = case when $11 then $12::text else video_webhook_url end
     where id = $1 returning *`,
    [
      id,
      quota.bytes !== undefined,
      quota.bytes ?? null,
      quota.count !== undefined,
      quota.count ?? null,
      patch.queueWeight ?? null,
      patch.alertWebhookUrl !== undefined,
      patch.alertWebhookUrl ?? null,
      patch.balanceAlertThresholds !== undefined,
      patch.balanceAlertThresholds ? JSON.stringify(patch.balanceAlertThresholds) : null,
      patch.videoWebhookUrl !== undefined,
      patch.videoWebhookUrl ?? null,
    ],
  );
  return rows[0] ? toOrganization(rows[0]) : null;
}
