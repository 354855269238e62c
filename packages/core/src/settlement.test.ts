import { describe, expect, it } from "vitest";
import { decideEnd, type EndingRun, settleRun } from "./settlement.js";

const run: EndingRun = {
  organizationId: "org_a",
  environment: "live",
  status: "processing",
  leaseOwner: "worker-1",
  reserved: 400_000,
  webhookUrl: "https://example.com/hook",
  webhookEvents: ["completed"],
};

describe("decideEnd", () => {
  it("lets an in-flight run end once, for its organization or the worker holding it", () => {
    expect(decideEnd(run, {})).toEqual({ ok: true });
    expect(decideEnd(run, { organizationId: "org_a" })).toEqual({ ok: true });
    expect(decideEnd(run, { leaseOwner: "worker-1" })).toEqual({ ok: true });
    expect(decideEnd({ ...run, status: "queued", leaseOwner: null }, { organizationId: "org_a" })).toEqual({
      ok: true,
    });
  });

  it("hides another organization's run, refuses an ended run and a lost lease", () => {
    expect(decideEnd(run, { organizationId: "org_b" })).toEqual({ ok: false, reason: "not_found" });
    expect(decideEnd(run, { organizationId: "org_a", environment: "test" })).toEqual({
      ok: false,
      reason: "not_found",
    });
    for (const status of ["succeeded", "failed", "timeout", "cancelled"] as const) {
      expect(decideEnd({ ...run, status }, {})).toEqual({ ok: false, reason: "already_terminal" });
    }
    expect(decideEnd(run, { leaseOwner: "worker-2" })).toEqual({ ok: false, reason: "lease_lost" });
    expect(decideEnd({ ...run, status: "queued", leaseOwner: null }, { leaseOwner: "worker-1" })).toEqual({
      ok: false,
      reason: "lease_lost",
    });
  });
});

describe("settleRun", () => {
  it("charges a success what it delivered, never more than reserved, and releases the whole reservation", () => {
    expect(settleRun(run, { status: "succeeded", billableSeconds: 3, charged: 300_000 })).toEqual({
      status: "succeeded",
      charged: 300_000,
      billableSeconds: 3,
      walletCharged: 300_000,
      released: 400_000,
      budgetReleased: 400_000,
      inFlightDelta: -1,
      orgInFlight: { live: -1, test: 0 },
      progress: 1,
      webhookEvent: "run.succeeded",
      vendorCost: null,
    });
    expect(settleRun(run, { status: "succeeded", billableSeconds: 9, charged: 900_000 }).charged).toBe(
      400_000,
    );
  });

  it("charges nothing for a failed, timed-out or cancelled run", () => {
    for (const status of ["failed", "timeout", "cancelled"] as const) {
      expect(settleRun({ ...run, webhookUrl: null }, { status })).toEqual({
        status,
        charged: 0,
        billableSeconds: 0,
        walletCharged: 0,
        released: 400_000,
        budgetReleased: 400_000,
        inFlightDelta: -1,
        orgInFlight: { live: -1, test: 0 },
        progress: null,
        webhookEvent: null,
        vendorCost: null,
      });
    }
  });

  it("raises the terminal event only for a webhook subscribed to it", () => {
    const ended = (webhookEvents: EndingRun["webhookEvents"]) =>
      settleRun({ ...run, webhookEvents }, { status: "failed" }).webhookEvent;
    expect(ended(["started", "progress", "completed"])).toBe("run.failed");
    expect(ended(["started", "progress"])).toBeNull();
  });

  it.each([
    ["a success's reported cost", { vendorCost: 181_440 }, 181_440],
    ["a success that cost nothing", { vendorCost: 0 }, 0],
    ["a cost above the charge (a loss)", { vendorCost: 500_000 }, 500_000],
    ["no cost reported", {}, null],
  ])("keeps the vendor cost of a success: %s", (_name, given, want) => {
    const outcome = { status: "succeeded", billableSeconds: 3, charged: 300_000, ...given } as const;
    expect(settleRun(run, outcome).vendorCost).toBe(want);
  });

  it.each([
    ["negative", -1],
    ["a fraction of a micro-USD", 0.5],
  ])("refuses a vendor cost that is %s", (_name, vendorCost) => {
    const outcome = { status: "succeeded", billableSeconds: 3, charged: 300_000, vendorCost } as const;
    expect(() => settleRun(run, outcome)).toThrow(RangeError);
  });
});

describe("settleRun on a test run", () => {
  it("bills the run as a live run would be billed, and takes nothing from the wallet", () => {
    const test: EndingRun = { ...run, environment: "test" };
    expect(settleRun(test, { status: "succeeded", billableSeconds: 3, charged: 300_000 })).toMatchObject({
      charged: 300_000,
      billableSeconds: 3,
      walletCharged: 0,
      released: 0,
      budgetReleased: 400_000,
      inFlightDelta: -1,
      orgInFlight: { live: 0, test: -1 },
    });
  });
});
