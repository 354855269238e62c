import { decideTopUp, type Micros } from "@refvid/core";
import type * as T from "../../types.js";
import type { Database } from "../database.js";
import { toOrganization } from "../rows.js";

export async function addTopUp(
  db: Database,
  input: {
    id: string;
    organizationId: string;
    amount: Micros;
    note: string | null;
    now: Date;
  },
): ReturnType<T.Store["addTopUp"]> {
  return db.transaction(async (tx) => {
    const locked = await tx.query("select * from organizations where id = $1 for update", [
      input.organizationId,
    ]);
    const current = locked.rows[0];
    if (!current) return null;
    const decision = decideTopUp(toOrganization(current).lifetimeTopUps, input.amount);
    if (!decision.ok) return { kind: "rejected", decision } as const;
    const { rows } = await tx.query(
      `update organizations set balance = balance + $2, lifetime_top_ups = $3, tier = $4, concurrency_limit = $5
       where id = $1 returning *`,
      [input.organizationId, input.amount, decision.lifetimeTopUps, decision.tier, decision.concurrency],
    );
    await tx.query(
      "insert into top_ups (id, organization_id, amount, note, created_at) values ($1, $2, $3, $4, $5)",
      [input.id, input.organizationId, input.amount, input.note, input.now],
    );
    const topUp = {
      id: input.id,
      organizationId: input.organizationId,
      amount: input.amount,
      note: input.note,
      createdAt: input.now,
    };
    return {
      kind: "added",
      topUp,
      organization: toOrganization(rows[0] as Record<string, unknown>),
    } as const;
  });
}
