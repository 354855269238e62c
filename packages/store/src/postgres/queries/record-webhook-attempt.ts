import type * as T from "../../types.js";
import type { Database } from "../database.js";

export async function recordWebhookAttempt(
  db: Database,
  id: string,
  result: T.WebhookAttemptResult,
): ReturnType<T.Store["recordWebhookAttempt"]> {
  if (result.ok) {
    await db.query(
      `update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2), state = 'delivered',
         delivered_at = $3, last_error = null where id = $1 and state = 'pending'`,
      [id, result.payload, result.now],
    );
    return;
  }
  await db.query(
    `update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2), last_error = $3,
       next_attempt_at = coalesce($4, next_attempt_at), state = case when $4::timestamptz is null then 'failed' else 'pending' end
     where id = $1 and state = 'pending'`,
    [id, result.payload, result.error, result.retryAt],
  );
}
