/**
 * MemoryStore's money moves: what admission holds and what a run's end settles, on the organization
 * and its key (as core decides them), each written to the ledger as Postgres writes it.
 */
import { type AdmissionHold, type Settlement, settleSpend } from "@refvid/core";
import { keyAlerts, type NewAlertDelivery, walletAlerts } from "../alert-deliveries.js";
import type { ApiKeyRecord, OrganizationRecord, RunRecord } from "../types.js";
import type { MemoryLedger } from "./ledger.js";

/**
 * Holds an admitted run's price on the wallet (a live run) and on the key's budget; returns the
 * spend alerts the hold raises.
 */
export function hold(
  ledger: MemoryLedger,
  org: OrganizationRecord,
  key: ApiKeyRecord,
  run: Pick<RunRecord, "id" | "apiKeyId">,
  held: AdmissionHold,
  now: Date,
): NewAlertDelivery[] {
  const before = org.balance - org.reserved;
  org.reserved += held.reserved;
  org.inFlight += held.orgInFlight.live;
  org.testInFlight += held.orgInFlight.test;
  key.inFlight += 1;
  key.spend.reserved += held.budgetReserved;
  if (held.reserved > 0) {
    ledger.add(org, "reservation", held.reserved, { runId: run.id, apiKeyId: run.apiKeyId }, now);
  }
  return [...(held.reserved > 0 ? walletAlerts(org, before, now) : []), ...keyAlerts(org, key, now)];
}

/** Applies a run's settlement to its organization's wallet and counts, and to its key. */
export function settle(
  ledger: MemoryLedger,
  org: OrganizationRecord,
  key: ApiKeyRecord,
  run: Pick<RunRecord, "id" | "apiKeyId">,
  settled: Settlement,
  now: Date,
): void {
  const links = { runId: run.id, apiKeyId: run.apiKeyId };
  org.balance -= settled.walletCharged;
  org.totalSpent += settled.walletCharged;
  if (settled.walletCharged > 0) ledger.add(org, "charge", -settled.walletCharged, links, now);
  org.reserved -= settled.released;
  if (settled.released > 0) ledger.add(org, "release", -settled.released, links, now);
  org.inFlight += settled.orgInFlight.live;
  org.testInFlight += settled.orgInFlight.test;
  key.inFlight += settled.inFlightDelta;
  key.spend = settleSpend(key.spend, settled.budgetReleased, settled.charged, now);
}
