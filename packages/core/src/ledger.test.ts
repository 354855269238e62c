import { describe, expect, it } from "vitest";
import { decideCorrection, type LedgerKind, reconcile } from "./ledger.js";

describe("reconcile", () => {
  it("adds balance entries to the balance and reservation entries to what is held", () => {
    const entries: { kind: LedgerKind; amount: number }[] = [
      { kind: "top_up", amount: 10_000_000 },
      { kind: "reservation", amount: 900_000 },
      { kind: "reservation", amount: 400_000 },
      { kind: "charge", amount: -600_000 },
      { kind: "release", amount: -900_000 },
      { kind: "adjustment", amount: -250_000 },
      { kind: "adjustment", amount: 50_000 },
      { kind: "top_up", amount: 2_000_000 },
      { kind: "reversal", amount: -2_000_000 },
    ];
    expect(reconcile(entries)).toEqual({ balance: 9_200_000, reserved: 400_000 });
    expect(reconcile([])).toEqual({ balance: 0, reserved: 0 });
  });
});

describe("decideCorrection", () => {
  const wallet = { balance: 5_000_000, reserved: 1_000_000 };
  it.each([
    ["adds money whatever the wallet holds", 1_000_000, true],
    ["takes out no more than is available", -4_000_000, true],
    ["refuses to take out what runs in flight hold", -4_000_001, false],
  ])("%s", (_name, amount, ok) => {
    expect(decideCorrection(wallet, amount).ok).toBe(ok);
  });

  it("says what is available when it refuses", () => {
    expect(decideCorrection(wallet, -5_000_000)).toEqual({
      ok: false,
      reason: "below_available",
      amount: -5_000_000,
      available: 4_000_000,
    });
  });
});
