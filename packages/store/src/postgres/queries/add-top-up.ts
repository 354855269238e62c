import { decideTopUp } from "@refvid/core";
import { rearmWallet } from "../../alert-deliveries.js";
import { topUpAudit } from "../../ledger-types.js";
import type * as T from "../../types.js";
import type { Database, Queryable } from "../database.js";
import { toOrganization, toTopUp } from "../rows.js";
import { NEXT_AUDIT_ID, NEXT_LEDGER_ID } from "./sql.js";

/**
 * A top-up in one transaction: lock the organization; a top-up already made with the same
 * Idempotency-Key is answered as it is (a replay, or a mismatch when it was of another amount or
 * note); core's lifetime-cap decision; the wallet, the top-up, its ledger entry and its audit entry.
 */
export async function addTopUp(db: Database, input: T.TopUpInput): ReturnType<T.Store["addTopUp"]> {
  return db.transaction(async (tx) => {
    const locked = await tx.query("select * from organizations where id = $1 for update", [
      input.organizationId,
    ]);
    const current = locked.rows[0];
    if (!current) return null;
    if (input.idempotencyKey !== undefined) {
      const earlier = await tx.query(
        "select * from top_ups where organization_id = $1 and idempotency_key = $2",
        [input.organizationId, input.idempotencyKey],
      );
      const found = earlier.rows[0];
      if (found) {
        const topUp = toTopUp(found);
        return topUp.amount === input.amount && topUp.note === input.note
          ? ({ kind: "replayed", topUp, organization: toOrganization(current) } as const)
          : ({ kind: "mismatch", topUp } as const);
      }
    }
    const org = toOrganization(current);
    const decision = decideTopUp(org.lifetimeTopUps, input.amount);
    if (!decision.ok) return { kind: "rejected", decision } as const;
    org.balance += input.amount;
    rearmWallet(org);
    const { rows } = await tx.query(
      `with o as (update organizations set balance = balance + $2, lifetime_top_ups = $3, tier = $4, concurrency_limit = $5,
           last_top_up = $2, balance_alerts_fired = $11 where id = $1 returning *),
         t as (insert into top_ups (id, organization_id, amount, note, created_at, actor, idempotency_key)
           values ($6, $1, $2, $7, $8, $9, $10) returning *),
         l as (insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, top_up_id, actor, created_at)
           select ${NEXT_LEDGER_ID}, $1, 'top_up', $2, o.balance, o.reserved, $6, $9, $8 from o)
       select to_jsonb(o) as organization, (select to_jsonb(t) from t) as top_up from o`,
      [
        input.organizationId,
        input.amount,
        decision.lifetimeTopUps,
        decision.tier,
        decision.concurrency,
        input.id,
        input.note,
        input.now,
        input.actor?.name ?? null,
        input.idempotencyKey ?? null,
        JSON.stringify(org.alerts.fired),
      ],
    );
    const row = rows[0] as { organization: Record<string, unknown>; top_up: Record<string, unknown> };
    if (input.actor) await audit(tx, topUpAudit({ ...input, actor: input.actor }));
    return {
      kind: "added",
      topUp: toTopUp(row.top_up),
      organization: toOrganization(row.organization),
    } as const;
  });
}

/** Adds an entry to the audit log, in the caller's transaction. */
export async function audit(tx: Queryable, entry: T.NewAuditEntry): Promise<T.AuditEntryRecord> {
  const { rows } = await tx.query(
    `insert into audit_log (id, actor, action, organization_id, target_id, detail, request_id, created_at)
     values (${NEXT_AUDIT_ID}, $1, $2, $3, $4, $5, $6, $7) returning *`,
    [
      entry.actor,
      entry.action,
      entry.organizationId,
      entry.targetId,
      JSON.stringify(entry.detail),
      entry.requestId,
      entry.createdAt,
    ],
  );
  const row = rows[0] as Record<string, unknown>;
  return { ...entry, id: String(row.id) };
}
