import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { json } from "./sql.js";

export async function completeIdempotency(
  db: Database,
  organizationId: string,
  key: string,
  { status, body }: T.IdempotencyResponse,
): ReturnType<T.Store["completeIdempotency"]> {
  await db.query(
    `update idempotency_keys set response_status = $3, response_body = $4
     where organization_id = $1 and key = $2 and response_status is null`,
    [organizationId, key, status, json(body)],
  );
}
