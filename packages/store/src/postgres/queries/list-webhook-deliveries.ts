import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toDelivery } from "../rows.js";

export async function listWebhookDeliveries(
  db: Database,
  runId: string,
): ReturnType<T.Store["listWebhookDeliveries"]> {
  const { rows } = await db.query("select * from webhook_deliveries where run_id = $1 order by seq", [runId]);
  return rows.map(toDelivery);
}
