/**
 * How a run ends (docs/architecture.md, "Where each rule lives"): whether it may end now, what it
 * is charged, what is released, which counters move and which webhook event it raises. Both stores
 * apply this decision inside the transaction that ends the run, and decide nothing themselves.
 */
import type { Micros } from "./money.js";
import { isInFlight, type RunStatus, type TerminalStatus } from "./run-states.js";

export interface EndingRun {
  organizationId: string;
  status: RunStatus;
  leaseOwner: string | null;
  reserved: Micros;
  webhookUrl: string | null;
}

/** Who asks to end the run: a cancel names its organization, a worker its lease. */
export interface EndRequest {
  organizationId?: string;
  leaseOwner?: string;
}

export type EndDecision =
  | { ok: true }
  /** Not this organization's run: it does not exist for the caller. */
  | { ok: false; reason: "not_found" }
  /** It has ended already: nothing changes (a run ends exactly once). */
  | { ok: false; reason: "already_terminal" }
  /** The worker no longer holds the run (requeued or taken by another worker). */
  | { ok: false; reason: "lease_lost" };

export function decideEnd(run: EndingRun, request: EndRequest): EndDecision {
  if (request.organizationId !== undefined && run.organizationId !== request.organizationId) {
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
  | { status: "succeeded"; billableSeconds: number; charged: Micros }
  | { status: Exclude<TerminalStatus, "succeeded"> };

export type WebhookEventType = `run.${TerminalStatus}`;

export interface Settlement {
  status: TerminalStatus;
  /** Taken from the balance and added to the total spent: never more than was reserved. */
  charged: Micros;
  billableSeconds: number;
  /** Released from the organization's reservation: all of it, whatever was charged. */
  released: Micros;
  /** Added to the organization's and the key's in-flight counts. */
  inFlightDelta: -1;
  /** Progress the run ends with: complete when it succeeded, none otherwise. */
  progress: 1 | null;
  /** The event to deliver, when the run has a webhook URL. */
  webhookEvent: WebhookEventType | null;
}

export function settleRun(run: EndingRun, outcome: EndOutcome): Settlement {
  const succeeded = outcome.status === "succeeded";
  return {
    status: outcome.status,
    charged: succeeded ? Math.min(outcome.charged, run.reserved) : 0,
    billableSeconds: succeeded ? outcome.billableSeconds : 0,
    released: run.reserved,
    inFlightDelta: -1,
    progress: succeeded ? 1 : null,
    webhookEvent: run.webhookUrl ? `run.${outcome.status}` : null,
  };
}
