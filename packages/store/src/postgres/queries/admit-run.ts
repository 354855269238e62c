import {
  admissionHold,
  admissionState,
  afterAdmission,
  concurrencyRemaining,
  decideAdmission,
  decideIdempotency,
} from "@refvid/core";
import { idempotencyAnswer } from "../../admission.js";
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toApiKey, toIdempotencyRecord, toOrganization, toRun } from "../rows.js";
import { json, notify } from "./sql.js";

export async function admitRun(
  db: Database,
  { run, idempotency, now }: Parameters<T.Store["admitRun"]>[0],
): ReturnType<T.Store["admitRun"]> {
  return db.transaction(async (tx) => {
    const orgRows = await tx.query("select * from organizations where id = $1 for update", [
      run.organizationId,
    ]);
    const keyRows = await tx.query("select * from api_keys where id = $1 for update", [run.apiKeyId]);
    if (!orgRows.rows[0] || !keyRows.rows[0]) return { kind: "api_key_gone" };
    const org = toOrganization(orgRows.rows[0]);
    const key = toApiKey(keyRows.rows[0]);
    if (idempotency) {
      const { rows } = await tx.query(
        "select * from idempotency_keys where organization_id = $1 and key = $2 and expires_at > $3",
        [run.organizationId, idempotency.key, now],
      );
      const earlier = idempotencyAnswer(
        decideIdempotency(rows[0] && toIdempotencyRecord(rows[0]), idempotency.requestHash, now),
      );
      if (earlier) return earlier;
    }
    if (key.revokedAt) return { kind: "api_key_gone" };
    const state = admissionState(org, key);
    const decision = decideAdmission(state, run.reserved);
    if (!decision.ok) return { kind: "rejected", decision };

    const hold = admissionHold(key.environment, run.reserved);
    await tx.query(
      `update organizations set reserved = reserved + $2, in_flight = in_flight + $3,
         test_in_flight = test_in_flight + $4 where id = $1`,
      [org.id, hold.reserved, hold.orgInFlight.live, hold.orgInFlight.test],
    );
    await tx.query("update api_keys set in_flight = in_flight + 1 where id = $1", [key.id]);
    const { rows } = await tx.query(
      `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, webhook_url, metadata, reserved, unit_price, reserved_seconds, created_at)
       values ($1, $2, $3, $4, $5, $6, 'queued', $7, $8, $9, $10, $11, $12) returning *`,
      [
        run.id,
        run.organizationId,
        run.apiKeyId,
        key.environment,
        run.endpoint,
        json(run.input),
        run.webhookUrl,
        json(run.metadata),
        run.reserved,
        run.unitPrice,
        run.reservedSeconds,
        run.createdAt,
      ],
    );
    const admitted = toRun(rows[0] as Record<string, unknown>);
    if (idempotency) {
      const response = idempotency.response?.(admitted);
      await tx.query(
        `insert into idempotency_keys (organization_id, key, request_hash, run_id, expires_at, response_status, response_body)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (organization_id, key) do update set request_hash = excluded.request_hash, run_id = excluded.run_id,
           expires_at = excluded.expires_at, response_status = excluded.response_status, response_body = excluded.response_body`,
        [
          run.organizationId,
          idempotency.key,
          idempotency.requestHash,
          run.id,
          idempotency.expiresAt,
          response?.status ?? null,
          response ? json(response.body) : null,
        ],
      );
    }
    await notify(tx, { kind: "queued" });
    const remaining = concurrencyRemaining(afterAdmission(state));
    return { kind: "admitted", run: admitted, concurrencyRemaining: remaining };
  });
}
