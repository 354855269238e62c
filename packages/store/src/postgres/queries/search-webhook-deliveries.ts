import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDeliveryLog } from "../rows.js";
import { DELIVERY_HISTORY } from "./sql.js";

/**
 * The statement a log search sends: newest first by `(created_at, id)` through
 * `webhook_deliveries_log` (or `_log_state` with a state), keyset paging after a cursor; a run's
 * deliveries are found through `webhook_deliveries_by_run`. Exported so a test EXPLAINs exactly
 * this statement.
 */
export function searchWebhookDeliveriesQuery(search: T.WebhookDeliverySearch): {
  text: string;
  params: unknown[];
} {
  const where = ["d.organization_id = $1", "d.environment = $2"];
  const params: unknown[] = [search.organizationId, search.environment];
  const add = (clause: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(clause(`$${params.length}`));
  };
  if (search.runId !== undefined) add((p) => `d.run_id = ${p}`, search.runId);
  if (search.state) add((p) => `d.state = ${p}`, search.state);
  if (search.after) {
    params.push(search.after.createdAt, search.after.id);
    where.push(`(d.created_at, d.id) < ($${params.length - 1}, $${params.length})`);
  }
  params.push(search.limit);
  const text = `select d.*, ${DELIVERY_HISTORY} from webhook_deliveries d where ${where.join(" and ")}
    order by d.created_at desc, d.id desc limit $${params.length}`;
  return { text, params };
}

export async function searchWebhookDeliveries(
  db: Database,
  search: T.WebhookDeliverySearch,
): ReturnType<T.Store["searchWebhookDeliveries"]> {
  const { text, params } = searchWebhookDeliveriesQuery(search);
  const { rows } = await db.query(text, params);
  return rows.map(toDeliveryLog);
}
