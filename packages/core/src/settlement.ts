/**
 * How a run ends (docs/architecture.md, "Where each rule lives"): whether it may end now, what it
 * is charged, what is released, which counters move and which webhook event it raises. Both stores
 * apply this decision inside the transaction that ends the run, and decide nothing themselves.
 */
import { type Environment, type InFlightDelta, inFlightDelta, paysFromWallet } from "./environments.js";
import { assertMicros, type Micros } from "./money.js";
import { isInFlight, type RunStatus, type TerminalStatus } from "./run-states.js";
import {
  type TerminalWebhookEvent,
  terminalEvent,
  type WebhookSubscriber,
  webhookGets,
} from "./webhook-events.js";

export interface EndingRun extends WebhookSubscriber {
  organizationId: string;
  environment: Environment;
  status: RunStatus;
  leaseOwner: string | null;
  reserved: Micros;
}

/** Who asks to end the run: a cancel names its organization and environment, a worker its lease. */
export interface EndRequest {
  organizationId?: string;
  environment?: Environment;
  leaseOwner?: string;
}

export type EndDecision =
  | { ok: true }
  /** Not this organization's run, or not of the caller's environment: it does not exist for the caller. */
  | { ok: false; reason: "not_found" }
  /** It has ended already: nothing changes (a run ends exactly once). */
  | { ok: false; reason: "already_terminal" }
  /** The worker no longer holds the run (requeued or taken by another worker). */
  | { ok: false; reason: "lease_lost" };

export function decideEnd(run: EndingRun, request: EndRequest): EndDecision {
  if (
    (request.organizationId !== undefined && run.organizationId !== request.organizationId) ||
    (request.environment !== undefined && run.environment !== request.environment)
  ) {
    return { ok: false, reason: "not_found" };
  }
  if (!isInFlight(run.status)) return { ok: false, reason: "already_terminal" };
  if (
    request.leaseOwner !== undefined &&
    (run.status !== "processing" || run.leaseOwner !== request.leaseOwner)
  ) {
    return { ok: false, reason: "lease_lost" };
  }
  return { ok: true };
}

export type EndOutcome =
  | { status: "succeeded"; billableSeconds: number; charged: Micros; vendorCost?: Micros }
  | { status: Exclude<TerminalStatus, "succeeded"> };

export interface Settlement {
  status: TerminalStatus;
  /** The run's charge, as billed on the run: never more than its price ceiling (`reserved`). */
  charged: Micros;
  billableSeconds: number;
  /** Taken from the balance and added to the total spent: the charge of a live run, 0 for a test run. */
  walletCharged: Micros;
  /** Released from the organization's reservation: all a live run held, whatever was charged. */
  released: Micros;
  /**
   * Released from what the key's runs hold against its budget: the run's whole price ceiling, in
   * either environment; `charged` counts against the budget instead (`settleSpend`).
   */
  budgetReleased: Micros;
  /** Added to the key's in-flight count. */
  inFlightDelta: -1;
  /** Added to the organization's in-flight counts: the run's environment goes down by one. */
  orgInFlight: InFlightDelta;
  /** Progress the run ends with: complete when it succeeded, none otherwise. */
  progress: 1 | null;
  /** The event to deliver, when the run's webhook subscribed to its end (`completed`). */
  webhookEvent: TerminalWebhookEvent | null;
  /**
   * What the vendor charged for the run, as the worker reported it for a success; null when it
   * reported none, and for a run that did not succeed (usage counts null as 0).
   */
  vendorCost: Micros | null;
}

export function settleRun(run: EndingRun, outcome: EndOutcome): Settlement {
  const succeeded = outcome.status === "succeeded";
  const charged = succeeded ? Math.min(outcome.charged, run.reserved) : 0;
  const wallet = paysFromWallet(run.environment);
  return {
    status: outcome.status,
    charged,
    billableSeconds: succeeded ? outcome.billableSeconds : 0,
    walletCharged: wallet ? charged : 0,
    released: wallet ? run.reserved : 0,
    budgetReleased: run.reserved,
    inFlightDelta: -1,
    orgInFlight: inFlightDelta(run.environment, -1),
    progress: succeeded ? 1 : null,
    webhookEvent: webhookGets(run, "completed") ? terminalEvent(outcome.status, Boolean(run.video)) : null,
    vendorCost: succeeded ? vendorCostOf(outcome.vendorCost) : null,
  };
}

/** A reported vendor cost, checked: a fraction or a negative amount is a bug in whoever reported it. */
function vendorCostOf(cost: Micros | undefined): Micros | null {
  if (cost === undefined) return null;
  assertMicros(cost);
  if (cost < 0) throw new RangeError(`a vendor cost is never negative: ${cost}`);
  return cost;
}
