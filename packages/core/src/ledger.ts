/**
 * The ledger (docs/decisions.md, "Budgets and the ledger"): every change of an organization's wallet
 * is an entry, written in the transaction that makes the change and never updated or deleted.
 * An entry's `amount` is signed, as its effect on one figure of the wallet:
 *
 * - on the balance: `top_up` (+), `reversal` (−, a top-up taken back), `adjustment` (±, an
 *   operator's correction) and `charge` (−, what a live run that succeeded was charged);
 * - on the reservation: `reservation` (+, a live run's price held at admission) and `release`
 *   (−, the whole hold given back when the run ends, whatever it was charged).
 *
 * So at every moment `balance = Σ balance entries` and `reserved = Σ reservation entries`, which
 * `reconcile` computes. Test runs move no money and have no entries.
 */
import type { Micros } from "./money.js";

export const LEDGER_KINDS = ["top_up", "reversal", "adjustment", "charge", "reservation", "release"] as const;
export type LedgerKind = (typeof LEDGER_KINDS)[number];

/** The kinds that move the balance; the others move the reservation. */
const BALANCE_KINDS: readonly LedgerKind[] = ["top_up", "reversal", "adjustment", "charge"];

export const movesBalance = (kind: LedgerKind): boolean => BALANCE_KINDS.includes(kind);

/** The wallet's figures the entries add up to. */
export function reconcile(entries: Iterable<{ kind: LedgerKind; amount: Micros }>): {
  balance: Micros;
  reserved: Micros;
} {
  let balance = 0;
  let reserved = 0;
  for (const entry of entries) {
    if (movesBalance(entry.kind)) balance += entry.amount;
    else reserved += entry.amount;
  }
  return { balance, reserved };
}

/** The longest reason a correction may give. */
export const MAX_REASON_LENGTH = 500;

export type CorrectionDecision =
  | { ok: true }
  /** It would take the wallet below what its runs in flight hold: `available` is what may go. */
  | { ok: false; reason: "below_available"; amount: Micros; available: Micros }
  /** The top-up was reversed already. */
  | { ok: false; reason: "already_reversed"; reversalId: string };

/**
 * Whether an operator's correction moving the balance by `amount` (negative: taking money out) may
 * be made: never so that `balance − reserved` falls below zero. A positive one always may (the
 * lifetime cap applies to top-ups only).
 */
export function decideCorrection(
  wallet: { balance: Micros; reserved: Micros },
  amount: Micros,
): CorrectionDecision {
  const available = wallet.balance - wallet.reserved;
  if (amount < 0 && available + amount < 0)
    return { ok: false, reason: "below_available", amount, available };
  return { ok: true };
}
