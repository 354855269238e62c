import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDeliveryLog } from "../rows.js";
import { DELIVERY_HISTORY } from "./sql.js";

export async function getWebhookDelivery(
  db: Database,
  organizationId: string,
  id: string,
): ReturnType<T.Store["getWebhookDelivery"]> {
  const { rows } = await db.query(
    `select d.*, ${DELIVERY_HISTORY} from webhook_deliveries d where d.id = $1 and d.organization_id = $2`,
    [id, organizationId],
  );
  return rows[0] ? toDeliveryLog(rows[0]) : null;
}
