/**
 * The run state machine (DESIGN.md, "States"). `queued` and `processing` are in flight; the four
 * terminal states never change again.
 */
import type { RunStatus } from "@refvid/api-types";

export type { RunStatus };
export type TerminalStatus = "succeeded" | "failed" | "timeout" | "cancelled";
export type InFlightStatus = "queued" | "processing";

export const RUN_STATUSES: readonly RunStatus[] = [
  "queued",
  "processing",
  "succeeded",
  "failed",
  "timeout",
  "cancelled",
];

const NEXT: Record<RunStatus, readonly RunStatus[]> = {
  queued: ["processing", "cancelled", "failed", "timeout"],
  processing: ["succeeded", "failed", "timeout", "cancelled"],
  succeeded: [],
  failed: [],
  timeout: [],
  cancelled: [],
};

export function isTerminal(status: RunStatus): status is TerminalStatus {
  return NEXT[status].length === 0;
}

export function isInFlight(status: RunStatus): status is InFlightStatus {
  return !isTerminal(status);
}

/** Whether a run may move from `from` to `to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return NEXT[from].includes(to);
}
