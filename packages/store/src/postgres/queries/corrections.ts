import { decideCorrection, tierFor } from "@refvid/core";
import { rearmWallet, walletAlerts } from "../../alert-deliveries.js";
import { adjustmentAudit, reversalAudit } from "../../ledger-types.js";
import type * as T from "../../types.js";
import type { Database, Queryable } from "../database.js";
import { type Row, toLedgerEntry, toOrganization, toTopUp } from "../rows.js";
import { audit } from "./add-top-up.js";
import { writeAlerts } from "./alerts.js";
import { NEXT_LEDGER_ID } from "./sql.js";

/** Moves the wallet's balance and lifetime top-ups, and writes the ledger entry, in one statement. */
const CORRECT = `with o as (update organizations set balance = balance + $2, lifetime_top_ups = $3, tier = $4,
      concurrency_limit = $5 where id = $1 returning *),
    l as (insert into ledger_entries (id, organization_id, kind, amount, balance, reserved, top_up_id, reason, actor, created_at)
      select ${NEXT_LEDGER_ID}, $1, $6, $2, o.balance, o.reserved, $7, $8, $9, $10 from o returning *)
  select to_jsonb(o) as organization, (select to_jsonb(l) from l) as entry from o`;

type CorrectionInput = {
  organizationId: string;
  reason: string;
  actor: T.Actor;
  now: Date;
};

/** See `LedgerStore.reverseTopUp`: the organization, then the top-up, locked; core decides. */
export async function reverseTopUp(
  db: Database,
  input: CorrectionInput & { topUpId: string },
): ReturnType<T.Store["reverseTopUp"]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query<{ organization: Row; top_up: Row; reversal: string | null }>(
      `select to_jsonb(o) as organization, to_jsonb(t) as top_up,
         (select id from ledger_entries where top_up_id = t.id and kind = 'reversal') as reversal
       from (select * from organizations where id = $1 for update) o
       join lateral (select * from top_ups where id = $2 and organization_id = o.id for update) t on true`,
      [input.organizationId, input.topUpId],
    );
    const found = rows[0];
    if (!found) return null;
    const org = toOrganization(found.organization);
    const topUp = toTopUp(found.top_up);
    if (found.reversal) {
      return {
        kind: "rejected",
        decision: { ok: false, reason: "already_reversed", reversalId: found.reversal },
      } as const;
    }
    const decision = decideCorrection(org, -topUp.amount);
    if (!decision.ok) return { kind: "rejected", decision } as const;
    const lifetime = Math.max(0, org.lifetimeTopUps - topUp.amount);
    const { tier, concurrency } = tierFor(lifetime);
    const made = await tx.query<{ organization: Row; entry: Row }>(CORRECT, [
      org.id,
      -topUp.amount,
      lifetime,
      tier,
      concurrency,
      "reversal",
      topUp.id,
      input.reason,
      input.actor.name,
      input.now,
    ]);
    await tx.query("update top_ups set reversed_at = $2 where id = $1", [topUp.id, input.now]);
    await correctionAlerts(tx, org, -topUp.amount, input.now);
    const entry = toLedgerEntry((made.rows[0] as { entry: Row }).entry);
    await audit(tx, reversalAudit(input, topUp, entry.id));
    return {
      kind: "made",
      entry,
      organization: toOrganization((made.rows[0] as { organization: Row }).organization),
    } as const;
  });
}

/** See `LedgerStore.adjustBalance`: the organization locked; core decides. */
export async function adjustBalance(
  db: Database,
  input: CorrectionInput & { amount: number },
): ReturnType<T.Store["adjustBalance"]> {
  return db.transaction(async (tx) => {
    const { rows } = await tx.query("select * from organizations where id = $1 for update", [
      input.organizationId,
    ]);
    if (!rows[0]) return null;
    const org = toOrganization(rows[0]);
    const decision = decideCorrection(org, input.amount);
    if (!decision.ok) return { kind: "rejected", decision } as const;
    await correctionAlerts(tx, org, input.amount, input.now);
    const made = await tx.query<{ organization: Row; entry: Row }>(CORRECT, [
      org.id,
      input.amount,
      org.lifetimeTopUps,
      org.tier,
      org.concurrencyLimit,
      "adjustment",
      null,
      input.reason,
      input.actor.name,
      input.now,
    ]);
    const entry = toLedgerEntry((made.rows[0] as { entry: Row }).entry);
    await audit(tx, adjustmentAudit(input, entry.id));
    return {
      kind: "made",
      entry,
      organization: toOrganization((made.rows[0] as { organization: Row }).organization),
    } as const;
  });
}

/**
 * A correction's alerts: money taken away may cross wallet thresholds, money added arms them
 * again. `org` is the organization before the correction.
 */
async function correctionAlerts(tx: Queryable, org: T.OrganizationRecord, amount: number, now: Date) {
  const before = org.balance - org.reserved;
  const fired = JSON.stringify(org.alerts.fired);
  const after = { ...org, balance: org.balance + amount, alerts: { ...org.alerts } };
  const deliveries = amount < 0 ? walletAlerts(after, before, now) : [];
  if (amount > 0) rearmWallet(after);
  if (deliveries.length > 0 || JSON.stringify(after.alerts.fired) !== fired)
    await writeAlerts(tx, { organizations: [after], keys: [], deliveries });
}
