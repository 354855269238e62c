import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDeliveryLog } from "../rows.js";
import { DELIVERY_HISTORY } from "./sql.js";

/** One statement: an ended delivery becomes pending for one redelivery; a pending one is due now. */
export async function redeliverWebhook(
  db: Database,
  { organizationId, environment, id, now }: Parameters<T.Store["redeliverWebhook"]>[0],
): ReturnType<T.Store["redeliverWebhook"]> {
  const { rows } = await db.query(
    `with d as (update webhook_deliveries set next_attempt_at = $4,
       redelivery = redelivery or state <> 'pending', state = 'pending'
       where id = $1 and organization_id = $2 and environment = $3 returning *)
     select d.*, ${DELIVERY_HISTORY} from d`,
    [id, organizationId, environment, now],
  );
  return rows[0] ? toDeliveryLog(rows[0]) : null;
}
