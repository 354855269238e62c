import { describe, expect, it } from "vitest";
import { canTransition, isInFlight, isTerminal, RUN_STATUSES, type RunStatus } from "./run-states.js";

const allowed: [RunStatus, RunStatus][] = [
  ["queued", "processing"],
  ["queued", "cancelled"],
  ["queued", "failed"],
  ["queued", "timeout"],
  ["processing", "succeeded"],
  ["processing", "failed"],
  ["processing", "timeout"],
  ["processing", "cancelled"],
];

describe("run state machine", () => {
  it("allows exactly the documented transitions", () => {
    for (const from of RUN_STATUSES) {
      for (const to of RUN_STATUSES) {
        const want = allowed.some(([f, t]) => f === from && t === to);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(want);
      }
    }
  });

  it("has four terminal states and two in flight", () => {
    expect(RUN_STATUSES.filter(isTerminal)).toEqual(["succeeded", "failed", "timeout", "cancelled"]);
    expect(RUN_STATUSES.filter(isInFlight)).toEqual(["queued", "processing"]);
  });
});
