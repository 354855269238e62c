/**
 * MemoryStore's ledger and audit log, never changed once added. Ledger entries are kept in the order
 * they were made (their ids), overall and per organization, and listed by it, as Postgres lists them;
 * the wallet's figures after each entry are taken from the organization as the caller just changed it.
 */
import type { LedgerKind, Micros } from "@refvid/core";
import { sequenceId } from "../ledger-types.js";
import type * as T from "../types.js";
import { copy } from "./copy.js";
import { KeysetList, take } from "./keyset-list.js";

type EntryLinks = Partial<Pick<T.LedgerEntryRecord, "runId" | "apiKeyId" | "topUpId" | "reason" | "actor">>;

export class MemoryLedger {
  private readonly all: T.LedgerEntryRecord[] = [];
  private readonly byOrganization = new Map<string, T.LedgerEntryRecord[]>();
  private readonly audit = new KeysetList<T.AuditEntryRecord>();
  private entries = 0;
  private audits = 0;

  /** Records an entry of `amount` (signed) against the wallet as it is now, after the change. */
  add(
    wallet: { id: string; balance: Micros; reserved: Micros },
    kind: LedgerKind,
    amount: Micros,
    links: EntryLinks,
    now: Date,
  ): T.LedgerEntryRecord {
    const entry: T.LedgerEntryRecord = {
      id: sequenceId("led_", ++this.entries),
      organizationId: wallet.id,
      kind,
      amount,
      balance: wallet.balance,
      reserved: wallet.reserved,
      runId: links.runId ?? null,
      apiKeyId: links.apiKeyId ?? null,
      topUpId: links.topUpId ?? null,
      reason: links.reason ?? null,
      actor: links.actor ?? null,
      createdAt: now,
    };
    this.all.push(entry);
    const own = this.byOrganization.get(entry.organizationId);
    if (own) own.push(entry);
    else this.byOrganization.set(entry.organizationId, [entry]);
    return copy(entry);
  }

  /** The reversal of a top-up, if it has one. */
  reversalOf(organizationId: string, topUpId: string): T.LedgerEntryRecord | undefined {
    return this.byOrganization
      .get(organizationId)
      ?.find((e) => e.kind === "reversal" && e.topUpId === topUpId);
  }

  readonly listLedger = async (search: T.LedgerSearch): Promise<T.LedgerEntryRecord[]> => {
    const source =
      search.organizationId === undefined ? this.all : this.byOrganization.get(search.organizationId);
    const entries = newestBefore(source ?? [], search.after?.id);
    return take(
      entries,
      search.limit,
      (e) =>
        (search.kinds === undefined || search.kinds.includes(e.kind)) &&
        (search.apiKeyId === undefined || e.apiKeyId === search.apiKeyId) &&
        (search.runId === undefined || e.runId === search.runId) &&
        (search.from === undefined || e.createdAt >= search.from) &&
        (search.to === undefined || e.createdAt < search.to),
    ).map(copy);
  };

  /** Adds to the audit log at once (in the same turn as the change it records). */
  addAudit(entry: T.NewAuditEntry): T.AuditEntryRecord {
    const record = { ...copy(entry), id: sequenceId("aud_", ++this.audits) };
    this.audit.add(record);
    return copy(record);
  }

  readonly recordAudit = async (entry: T.NewAuditEntry): Promise<T.AuditEntryRecord> => this.addAudit(entry);

  readonly listAudit = async (search: T.AuditSearch): Promise<T.AuditEntryRecord[]> =>
    take(
      this.audit.descending(search.after),
      search.limit,
      (e) =>
        (search.organizationId === undefined || e.organizationId === search.organizationId) &&
        (search.actor === undefined || e.actor === search.actor),
    ).map(copy);
}

/** Entries newest first, from just before the id `after` when given (ids grow with position). */
function* newestBefore(entries: readonly T.LedgerEntryRecord[], after: string | undefined) {
  let lo = 0;
  let hi = entries.length;
  if (after !== undefined) {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((entries[mid] as T.LedgerEntryRecord).id < after) lo = mid + 1;
      else hi = mid;
    }
  }
  for (let i = (after === undefined ? entries.length : lo) - 1; i >= 0; i--)
    yield entries[i] as T.LedgerEntryRecord;
}
