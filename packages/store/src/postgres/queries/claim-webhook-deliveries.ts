import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDelivery } from "../rows.js";

export async function claimWebhookDeliveries(
  db: Database,
  { now, limit, leaseMs }: Parameters<T.Store["claimWebhookDeliveries"]>[0],
): ReturnType<T.Store["claimWebhookDeliveries"]> {
  // A run's events go out in order: none while an earlier one has not had its first attempt (`e`).
  // A progress event's first attempt comes a second or more after that of the run's last one (`p`),
  // which holds when it was claimed, then when it ended.
  const { rows } = await db.query(
    `with due as (select d.id, d.next_attempt_at from webhook_deliveries d
                  where d.state = 'pending' and d.next_attempt_at <= $1
                    and not exists (select 1 from webhook_deliveries e where e.run_id = d.run_id and e.seq < d.seq
                                    and e.state = 'pending' and e.attempts = 0)
                    and (d.event_type <> 'run.progress' or d.first_attempt_at is not null
                         or not exists (select 1 from webhook_deliveries p where p.run_id = d.run_id
                                        and p.event_type = 'run.progress'
                                        and p.first_attempt_at > $1::timestamptz - interval '1 second'))
                  order by d.next_attempt_at limit $2 for update of d skip locked)
     update webhook_deliveries d set next_attempt_at = $3,
       first_attempt_at = coalesce(d.first_attempt_at, $1) from due where d.id = due.id
     returning d.*, due.next_attempt_at as due_at`,
    [now, limit, new Date(now.getTime() + leaseMs)],
  );
  // Report each delivery as it was due, as the in-memory store does.
  return rows.map((r) => ({ ...toDelivery(r), nextAttemptAt: new Date(r.due_at as Date) }));
}
