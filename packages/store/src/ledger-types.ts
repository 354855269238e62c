/**
 * The ledger, operators' corrections and the audit log (docs/decisions.md, "Budgets and the
 * ledger"). Ledger entries are written by the store in the transaction that moves the money
 * (admission, a run's end, a top-up, a reversal, an adjustment); none is ever updated or deleted.
 */
import type { CorrectionDecision, LedgerKind, Micros, TopUpDecision } from "@refvid/core";
import type { Keyset, OrganizationRecord, TopUpRecord } from "./types.js";

export interface LedgerEntryRecord {
  /**
   * `led_` and a zero-padded sequence number, taken under the organization's lock: a later change
   * of a wallet has a greater id. Entries are listed by id.
   */
  id: string;
  organizationId: string;
  kind: LedgerKind;
  /** Signed: the entry's effect on the balance, or on the reservation (core's `ledger.ts`). */
  amount: Micros;
  /** The wallet right after the entry. */
  balance: Micros;
  reserved: Micros;
  /** The run (reservation, charge, release) and its key; the top-up (top_up, reversal). */
  runId: string | null;
  apiKeyId: string | null;
  topUpId: string | null;
  /** Why an operator made it (reversal, adjustment), and which admin token did (top-ups too). */
  reason: string | null;
  actor: string | null;
  createdAt: Date;
}

/** Newest first by id; `after` continues after an entry (only its id counts). */
export interface LedgerSearch {
  /** One organization's entries; every organization's when absent (the admin API). */
  organizationId?: string;
  kinds?: LedgerKind[];
  apiKeyId?: string;
  runId?: string;
  /** Entries made at or after `from`, before `to`. */
  from?: Date;
  to?: Date;
  limit: number;
  after?: Keyset;
}

/** Who made an admin change: the admin token's name, and the request. */
export interface Actor {
  name: string;
  requestId: string;
}

export interface AuditEntryRecord {
  /** `aud_` and a zero-padded sequence number. */
  id: string;
  /** The admin token's name. */
  actor: string;
  /** What was done: `organization.create`, `top_up.reverse`, `api_key.update`… */
  action: string;
  organizationId: string | null;
  /** The record acted on: an organization, key, top-up or ledger entry id. */
  targetId: string | null;
  /** What the request asked for, as the admin API received it (never a secret). */
  detail: Record<string, unknown>;
  requestId: string;
  createdAt: Date;
}

export type NewAuditEntry = Omit<AuditEntryRecord, "id">;

export interface AuditSearch {
  organizationId?: string;
  actor?: string;
  limit: number;
  after?: Keyset;
}

export interface TopUpInput {
  id: string;
  organizationId: string;
  amount: Micros;
  note: string | null;
  now: Date;
  /** The request's Idempotency-Key: a top-up with one already made is not made again. */
  idempotencyKey?: string;
  /** Recorded on the ledger entry and in the audit log, with the top-up. */
  actor?: Actor;
}

export type TopUpResult =
  | { kind: "added"; topUp: TopUpRecord; organization: OrganizationRecord }
  /** The Idempotency-Key made this very top-up before: nothing was added again. */
  | { kind: "replayed"; topUp: TopUpRecord; organization: OrganizationRecord }
  /** The Idempotency-Key made a different top-up (another amount or note). */
  | { kind: "mismatch"; topUp: TopUpRecord }
  | { kind: "rejected"; decision: Exclude<TopUpDecision, { ok: true }> };

export type CorrectionResult =
  | { kind: "made"; entry: LedgerEntryRecord; organization: OrganizationRecord }
  | { kind: "rejected"; decision: Exclude<CorrectionDecision, { ok: true }> };

export interface LedgerStore {
  /** Entries newest first by `(createdAt, id)`. */
  listLedger(search: LedgerSearch): Promise<LedgerEntryRecord[]>;
  /**
   * Takes a top-up back: a `reversal` entry of minus its amount, its organization's lifetime
   * top-ups (and so its tier) lowered by it, unless that would leave less than its runs in flight
   * hold, or it was reversed already. Null when the organization has no such top-up.
   */
  reverseTopUp(input: {
    organizationId: string;
    topUpId: string;
    reason: string;
    actor: Actor;
    now: Date;
  }): Promise<CorrectionResult | null>;
  /** Moves the balance by `amount` (signed) as an `adjustment`, unless it would leave less than is held. */
  adjustBalance(input: {
    organizationId: string;
    amount: Micros;
    reason: string;
    actor: Actor;
    now: Date;
  }): Promise<CorrectionResult | null>;
  /** Adds to the audit log (the changes a correction or top-up makes are logged with them). */
  recordAudit(entry: NewAuditEntry): Promise<AuditEntryRecord>;
  /** The audit log newest first by `(createdAt, id)`. */
  listAudit(search: AuditSearch): Promise<AuditEntryRecord[]>;
}

/** Sequence numbers as ids whose text order is their number's order. */
export const sequenceId = (prefix: string, n: number | bigint | string): string =>
  `${prefix}${String(n).padStart(19, "0")}`;

/** The audit entry of a top-up an admin token made (`input.actor`). */
export const topUpAudit = (input: TopUpInput & { actor: Actor }): NewAuditEntry =>
  auditOf(input.actor, input.now, {
    action: "top_up.create",
    organizationId: input.organizationId,
    targetId: input.id,
    detail: { amount: input.amount, note: input.note, idempotency_key: input.idempotencyKey ?? null },
  });

/** The audit entry of a top-up's reversal, whose ledger entry is `entryId`. */
export const reversalAudit = (
  input: { actor: Actor; reason: string; now: Date },
  topUp: Pick<TopUpRecord, "id" | "organizationId" | "amount">,
  entryId: string,
): NewAuditEntry =>
  auditOf(input.actor, input.now, {
    action: "top_up.reverse",
    organizationId: topUp.organizationId,
    targetId: topUp.id,
    detail: { reason: input.reason, amount: topUp.amount, ledger_entry_id: entryId },
  });

/** The audit entry of an adjustment, whose ledger entry is `entryId`. */
export const adjustmentAudit = (
  input: { actor: Actor; reason: string; amount: Micros; organizationId: string; now: Date },
  entryId: string,
): NewAuditEntry =>
  auditOf(input.actor, input.now, {
    action: "balance.adjust",
    organizationId: input.organizationId,
    targetId: entryId,
    detail: { reason: input.reason, amount: input.amount },
  });

const auditOf = (
  actor: Actor,
  now: Date,
  change: Pick<AuditEntryRecord, "action" | "organizationId" | "targetId" | "detail">,
): NewAuditEntry => ({ actor: actor.name, requestId: actor.requestId, createdAt: now, ...change });
