import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

export async function rotateWebhookSecret(
  db: Database,
  { organizationId, secret, previousExpiresAt }: Parameters<T.Store["rotateWebhookSecret"]>[0],
): ReturnType<T.Store["rotateWebhookSecret"]> {
  // The right side of every SET sees the row as it was: the replaced secret becomes the previous one.
  const { rows } = await db.query(
    `update organizations set previous_webhook_secret = webhook_secret, previous_webhook_secret_expires_at = $3,
       webhook_secret = $2 where id = $1 returning *`,
    [organizationId, secret, previousExpiresAt],
  );
  return rows[0] ? toOrganization(rows[0]) : null;
}
