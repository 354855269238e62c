import type * as T from "../../types.js";
import type { Database } from "../database.js";

/**
 * Counts the attempt on the delivery and appends it to webhook_attempts in one statement, so the
 * log and the count never disagree; a delivery no longer pending (another dispatcher recorded it)
 * is left as it is. The first attempt's end is kept: a run's next progress event waits a second
 * after it.
 */
export async function recordWebhookAttempt(
  db: Database,
  id: string,
  result: T.WebhookAttemptResult,
): ReturnType<T.Store["recordWebhookAttempt"]> {
  const log = `insert into webhook_attempts (delivery_id, number, attempted_at, status, error, duration_ms)
     select id, attempts, $3, $4, $5, $6 from counted`;
  const attempt = [result.startedAt, result.status, result.ok ? null : result.error, result.durationMs];
  const firstEnded =
    "first_attempt_at = case when attempts = 0 then $8::timestamptz else first_attempt_at end";
  if (result.ok) {
    await db.query(
      `with counted as (update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2),
         state = 'delivered', delivered_at = $7, last_error = null, redelivery = false, ${firstEnded}
         where id = $1 and state = 'pending' returning id, attempts)
       ${log}`,
      [id, result.payload, ...attempt, result.now, result.now],
    );
    return;
  }
  await db.query(
    `with counted as (update webhook_deliveries set attempts = attempts + 1, payload = coalesce(payload, $2),
       last_error = $5, next_attempt_at = coalesce($7, next_attempt_at), redelivery = false,
       state = case when $7::timestamptz is null then 'failed' else 'pending' end, ${firstEnded}
       where id = $1 and state = 'pending' returning id, attempts)
     ${log}`,
    [id, result.payload, ...attempt, result.retryAt, result.now],
  );
}
