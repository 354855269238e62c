/** Budgets, ledger entries and audit entries as the API shows them. */
import type { components } from "@refvid/api-types";
import { budgetStanding, formatUsd, type KeyBudget, type KeySpend } from "@refvid/core";
import type { AuditEntryRecord, LedgerEntryRecord } from "@refvid/store";

type Schemas = components["schemas"];

/** A key's budget and where it stands at `now`; null without one. */
export function budgetView(
  key: { budget: KeyBudget | null; spend: KeySpend },
  now: Date,
): Schemas["BudgetStanding"] | null {
  if (!key.budget) return null;
  const standing = budgetStanding(key.budget, key.spend, now);
  return {
    amount_usd: formatUsd(key.budget.amount),
    period: key.budget.period,
    spent_usd: formatUsd(standing.spent),
    reserved_usd: formatUsd(standing.reserved),
    remaining_usd: formatUsd(standing.remaining),
    period_start: standing.periodStart.toISOString(),
    resets_at: standing.resetsAt.toISOString(),
  };
}

export function ledgerEntryView(entry: LedgerEntryRecord): Schemas["LedgerEntry"] {
  return {
    ledger_entry_id: entry.id,
    organization_id: entry.organizationId,
    kind: entry.kind,
    amount_usd: formatUsd(entry.amount),
    balance_usd: formatUsd(entry.balance),
    reserved_usd: formatUsd(entry.reserved),
    run_id: entry.runId,
    api_key_id: entry.apiKeyId,
    top_up_id: entry.topUpId,
    reason: entry.reason,
    actor: entry.actor,
    created_at: entry.createdAt.toISOString(),
  };
}

export function auditEntryView(entry: AuditEntryRecord): Schemas["AuditEntry"] {
  return {
    audit_entry_id: entry.id,
    actor: entry.actor,
    action: entry.action,
    organization_id: entry.organizationId,
    target_id: entry.targetId,
    detail: entry.detail,
    request_id: entry.requestId,
    created_at: entry.createdAt.toISOString(),
  };
}
