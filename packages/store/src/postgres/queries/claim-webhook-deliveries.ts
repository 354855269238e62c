import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDelivery } from "../rows.js";

export async function claimWebhookDeliveries(
  db: Database,
  { now, limit, leaseMs }: Parameters<T.Store["claimWebhookDeliveries"]>[0],
): ReturnType<T.Store["claimWebhookDeliveries"]> {
  const { rows } = await db.query(
    `with due as (select id, next_attempt_at from webhook_deliveries where state = 'pending' and next_attempt_at <= $1
                  order by next_attempt_at limit $2 for update skip locked)
     update webhook_deliveries d set next_attempt_at = $3 from due where d.id = due.id
     returning d.*, due.next_attempt_at as due_at`,
    [now, limit, new Date(now.getTime() + leaseMs)],
  );
  // Report each delivery as it was due, as the in-memory store does.
  return rows.map((r) => ({ ...toDelivery(r), nextAttemptAt: new Date(r.due_at as Date) }));
}
