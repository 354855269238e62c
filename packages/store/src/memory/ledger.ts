/**
 * MemoryStore's ledger and audit log: entries in keyset order, overall and per organization, never
 * changed once added. The wallet's figures after each entry are taken from the organization as the
 * caller has just changed it.
 */
import type { LedgerKind, Micros } from "@refvid/core";
import { sequenceId } from "../ledger-types.js";
import type * as T from "../types.js";
import { copy } from "./copy.js";
import { KeysetList, listIn, take } from "./keyset-list.js";

type EntryLinks = Partial<Pick<T.LedgerEntryRecord, "runId" | "apiKeyId" | "topUpId" | "reason" | "actor">>;

export class MemoryLedger {
  private readonly all = new KeysetList<T.LedgerEntryRecord>();
  private readonly byOrganization = new Map<string, KeysetList<T.LedgerEntryRecord>>();
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
    this.all.add(entry);
    listIn(this.byOrganization, entry.organizationId).add(entry);
    return copy(entry);
  }

  /** The reversal of a top-up, if it has one. */
  reversalOf(organizationId: string, topUpId: string): T.LedgerEntryRecord | undefined {
    const entries = this.byOrganization.get(organizationId)?.descending() ?? [];
    return take(entries, 1, (e) => e.kind === "reversal" && e.topUpId === topUpId)[0];
  }

  readonly listLedger = async (search: T.LedgerSearch): Promise<T.LedgerEntryRecord[]> => {
    const source =
      search.organizationId === undefined ? this.all : this.byOrganization.get(search.organizationId);
    const entries = source?.descending(search.after) ?? [];
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
