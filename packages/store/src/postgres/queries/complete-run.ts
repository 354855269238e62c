import { decideEnd, settleRun } from "@refvid/core";
import type * as T from "../../types.js";
import { webhookIdOf } from "../../webhook-id.js";
import type { Database, Queryable } from "../database.js";
import { toRun } from "../rows.js";
import { json, notify } from "./sql.js";

export async function completeRun(
  db: Database,
  input: {
    runId: string;
    outcome: T.RunOutcome;
    now: Date;
    organizationId?: string;
    environment?: T.Environment;
    leaseOwner?: string;
  },
): ReturnType<T.Store["completeRun"]> {
  return db.transaction((tx) => completeRunIn(tx, input));
}

/** The terminal transition: run, then organization, then key, all in the caller's transaction. */
async function completeRunIn(
  tx: Queryable,
  { runId, outcome, now, organizationId, environment, leaseOwner }: Parameters<T.Store["completeRun"]>[0],
): Promise<T.CompleteResult> {
  const found = await tx.query("select * from runs where id = $1 for update", [runId]);
  const row = found.rows[0];
  if (!row) return { kind: "not_found" };
  const run = toRun(row);
  const decision = decideEnd(run, { organizationId, environment, leaseOwner });
  if (!decision.ok)
    return decision.reason === "not_found" ? { kind: "not_found" } : { kind: decision.reason, run };

  const settled = settleRun(run, outcome);
  await tx.query("select id from organizations where id = $1 for update", [run.organizationId]);
  await tx.query(
    `update organizations set reserved = reserved - $2, balance = balance - $3, total_spent = total_spent + $3,
       in_flight = in_flight + $4, test_in_flight = test_in_flight + $5 where id = $1`,
    [
      run.organizationId,
      settled.released,
      settled.walletCharged,
      settled.orgInFlight.live,
      settled.orgInFlight.test,
    ],
  );
  await tx.query("update api_keys set in_flight = in_flight + $2 where id = $1", [
    run.apiKeyId,
    settled.inFlightDelta,
  ]);
  const { rows } = await tx.query(
    `update runs set status = $2, charged = $3, billable_seconds = $4, output = $5, error = $6, progress = $7,
       completed_at = $8, lease_owner = null, lease_expires_at = null where id = $1 returning *`,
    [
      runId,
      settled.status,
      settled.charged,
      settled.billableSeconds,
      outcome.status === "succeeded" ? json(outcome.output) : null,
      outcome.status === "succeeded" ? null : json(outcome.error),
      settled.progress,
      now,
    ],
  );
  if (run.webhookUrl && settled.webhookEvent) {
    await tx.query(
      `insert into webhook_deliveries (id, run_id, organization_id, environment, created_at, url, event_type, next_attempt_at, state)
       values ($1, $2, $3, $4, $6, $5, $7, $6, 'pending')`,
      [
        webhookIdOf(run.id),
        run.id,
        run.organizationId,
        run.environment,
        run.webhookUrl,
        now,
        settled.webhookEvent,
      ],
    );
  }
  await notify(tx, { kind: "ended", runId });
  return { kind: "completed", run: toRun(rows[0] as Record<string, unknown>) };
}
