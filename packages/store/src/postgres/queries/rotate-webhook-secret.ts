import type { Environment } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

/**
 * One statement per environment, each touching only its own columns (`webhook_secret` is the live
 * one, as `in_flight` is the live count). The right side of every SET sees the row as it was: the
 * replaced secret becomes the previous one.
 */
const ROTATE: Record<Environment, string> = {
  live: `update organizations set previous_webhook_secret = webhook_secret,
           previous_webhook_secret_expires_at = $3, webhook_secret = $2
         where id = $1 returning *`,
  test: `update organizations set previous_test_webhook_secret = test_webhook_secret,
           previous_test_webhook_secret_expires_at = $3, test_webhook_secret = $2
         where id = $1 returning *`,
};

export async function rotateWebhookSecret(
  db: Database,
  { organizationId, environment, secret, previousExpiresAt }: Parameters<T.Store["rotateWebhookSecret"]>[0],
): ReturnType<T.Store["rotateWebhookSecret"]> {
  const { rows } = await db.query(ROTATE[environment], [organizationId, secret, previousExpiresAt]);
  return rows[0] ? toOrganization(rows[0]) : null;
}
