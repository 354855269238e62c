/**
 * Money in the admin API: top-ups (once per Idempotency-Key), their reversals and adjustments,
 * every organization's ledger, and the audit log. The store writes each change with its ledger
 * and audit entries in one transaction; core decides what is allowed.
 */
import type { components } from "@refvid/api-types";
import {
  ConflictError,
  formatUsd,
  IdempotencyKeyReusedError,
  InvalidRequestError,
  LEDGER_KINDS,
  type LedgerKind,
  MAX_TOP_UP,
  NotFoundError,
  parseUsd,
} from "@refvid/core";
import type { Actor, CorrectionResult, LedgerSearch } from "@refvid/store";
import type { AppDeps } from "../deps.js";
import { newTopUpId } from "../ids.js";
import { auditEntryView, ledgerEntryView } from "../views/money.js";
import { organizationView, orgNotFound, topUpView } from "./admin.js";
import { mustExist, type PageQuery } from "./admin-lists.js";
import { pageOf, pageStart, parseInstant } from "./keyset-page.js";

type Schemas = components["schemas"];

export async function createTopUp(
  deps: AppDeps,
  actor: Actor,
  organizationId: string,
  body: Schemas["CreateTopUpRequest"],
  idempotencyKey: string | undefined,
): Promise<{ replayed: boolean; topUp: Schemas["TopUp"] }> {
  const amount = parseUsd(body.amount_usd);
  if (amount === null || amount <= 0 || amount > MAX_TOP_UP) {
    throw new InvalidRequestError([
      {
        field: "body.amount_usd",
        message: "must be a positive amount of at most 1000000000 USD with up to 6 decimals",
        rule: "amount",
      },
    ]);
  }
  // The lifetime cap and the Idempotency-Key are checked by the store under the organization's
  // row lock, so racing top-ups cannot pass the cap together nor be made twice.
  const result = await deps.store.addTopUp({
    id: newTopUpId(),
    organizationId,
    amount,
    note: body.note ?? null,
    now: deps.clock.now(),
    actor,
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  });
  if (!result) throw orgNotFound(organizationId);
  if (result.kind === "mismatch") throw new IdempotencyKeyReusedError();
  if (result.kind === "rejected") {
    throw new InvalidRequestError([
      {
        field: "body.amount_usd",
        message: `would take the organization's lifetime top-ups past ${formatUsd(result.decision.max)} USD (now ${formatUsd(result.decision.lifetimeTopUps)})`,
        rule: "amount",
      },
    ]);
  }
  return {
    replayed: result.kind === "replayed",
    topUp: {
      ...topUpView(result.topUp),
      organization: organizationView(result.organization, deps.config.uploadQuota),
    },
  };
}

export async function reverseTopUp(
  deps: AppDeps,
  actor: Actor,
  organizationId: string,
  topUpId: string,
  body: Schemas["CorrectionRequest"],
): Promise<Schemas["Correction"]> {
  const result = await deps.store.reverseTopUp({
    organizationId,
    topUpId,
    reason: body.reason,
    actor,
    now: deps.clock.now(),
  });
  if (!result) {
    await mustExist(deps, organizationId);
    throw new NotFoundError("not_found", `Organization ${organizationId} has no top-up ${topUpId}.`);
  }
  return correctionView(deps, result);
}

export async function adjustBalance(
  deps: AppDeps,
  actor: Actor,
  organizationId: string,
  body: Schemas["CreateAdjustmentRequest"],
): Promise<Schemas["Correction"]> {
  const amount = parseUsd(body.amount_usd);
  if (amount === null || amount === 0 || Math.abs(amount) > MAX_TOP_UP) {
    throw new InvalidRequestError([
      {
        field: "body.amount_usd",
        message: "must be a non-zero amount of at most 1000000000 USD either way, with up to 6 decimals",
        rule: "amount",
      },
    ]);
  }
  const result = await deps.store.adjustBalance({
    organizationId,
    amount,
    reason: body.reason,
    actor,
    now: deps.clock.now(),
  });
  if (!result) throw orgNotFound(organizationId);
  return correctionView(deps, result);
}

function correctionView(deps: AppDeps, result: CorrectionResult): Schemas["Correction"] {
  if (result.kind === "made") {
    return {
      ledger_entry: ledgerEntryView(result.entry),
      organization: organizationView(result.organization, deps.config.uploadQuota),
    };
  }
  const { decision } = result;
  if (decision.reason === "already_reversed") {
    throw new ConflictError(
      "top_up_already_reversed",
      `This top-up was reversed already (ledger entry ${decision.reversalId}).`,
    );
  }
  throw new ConflictError(
    "insufficient_available_balance",
    `This would take ${formatUsd(-decision.amount)} USD but ${formatUsd(decision.available)} USD is available ` +
      "(the rest is held by runs in flight): a correction never takes the available balance below 0.",
  );
}

/** The filters of a ledger listing, as the query gives them. */
export interface LedgerQuery extends PageQuery {
  /** Kinds as the query gave them: split by the validator, or one comma-separated text. */
  kind?: string | string[] | undefined;
  apiKeyId?: string | undefined;
  runId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * A page of one organization's ledger (`GET /v1/ledger`), or of every organization's
 * (`GET /admin/v1/ledger` without `organization_id`).
 */
export async function listLedger(
  deps: AppDeps,
  organizationId: string | undefined,
  query: LedgerQuery,
): Promise<Schemas["LedgerPage"]> {
  const { limit = 20, cursor } = query;
  const kinds = kindsOf(query.kind);
  const from = parseInstant(query.from, "query.from");
  const to = parseInstant(query.to, "query.to");
  const filters = { organizationId, kinds, apiKeyId: query.apiKeyId, runId: query.runId, from, to };
  const start = pageStart(deps.cursors, { listing: "ledger", cursor, filters, field: "query.cursor" });
  const search: LedgerSearch = {
    limit: limit + 1,
    ...(organizationId !== undefined ? { organizationId } : {}),
    ...(kinds !== undefined ? { kinds } : {}),
    ...(query.apiKeyId !== undefined ? { apiKeyId: query.apiKeyId } : {}),
    ...(query.runId !== undefined ? { runId: query.runId } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
    ...(start.after ? { after: start.after } : {}),
  };
  return pageOf(await deps.store.listLedger(search), limit, start, ledgerEntryView);
}

/** `kind=charge,release` as the validator passed it: an array, or one comma-separated string. */
function kindsOf(kind: string | string[] | undefined): LedgerKind[] | undefined {
  if (kind === undefined) return undefined;
  const kinds = (Array.isArray(kind) ? kind : kind.split(",")).filter((k) => k !== "");
  const unknown = kinds.find((k) => !(LEDGER_KINDS as readonly string[]).includes(k));
  if (unknown !== undefined || kinds.length === 0) {
    throw new InvalidRequestError([
      { field: "query.kind", message: `must be among ${LEDGER_KINDS.join(", ")}`, rule: "enum" },
    ]);
  }
  return kinds as LedgerKind[];
}

export async function listAudit(
  deps: AppDeps,
  query: PageQuery & { organizationId?: string | undefined; actor?: string | undefined },
): Promise<Schemas["AuditPage"]> {
  const { limit = 20, cursor, organizationId, actor } = query;
  const filters = { organizationId, actor };
  const start = pageStart(deps.cursors, { listing: "audit log", cursor, filters, field: "query.cursor" });
  const found = await deps.store.listAudit({
    limit: limit + 1,
    ...(organizationId !== undefined ? { organizationId } : {}),
    ...(actor !== undefined ? { actor } : {}),
    ...(start.after ? { after: start.after } : {}),
  });
  return pageOf(found, limit, start, auditEntryView);
}
