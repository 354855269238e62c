/**
 * The run state machine. `queued` and `processing` are in flight; the terminal states never change
 * again. The list of terminal states is the spec's (`TERMINAL_STATUSES` in @refvid/api-types,
 * checked against the Run schema), which the client reads too; everything here derives from it.
 */
import { type RunStatus, TERMINAL_STATUSES } from "@refvid/api-types";

export type { RunStatus };
export { TERMINAL_STATUSES };
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];
export type InFlightStatus = Exclude<RunStatus, TerminalStatus>;

export const IN_FLIGHT_STATUSES = ["queued", "processing"] as const satisfies readonly InFlightStatus[];

export const RUN_STATUSES: readonly RunStatus[] = [...IN_FLIGHT_STATUSES, ...TERMINAL_STATUSES];

const terminal: ReadonlySet<RunStatus> = new Set(TERMINAL_STATUSES);

const NEXT: Record<InFlightStatus, readonly RunStatus[]> = {
  queued: ["processing", "cancelled", "failed", "timeout"],
  processing: TERMINAL_STATUSES,
};

export function isTerminal(status: RunStatus): status is TerminalStatus {
  return terminal.has(status);
}

export function isInFlight(status: RunStatus): status is InFlightStatus {
  return !isTerminal(status);
}

/** Whether a run may move from `from` to `to`. */
export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return isInFlight(from) && NEXT[from].includes(to);
}
