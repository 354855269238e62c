import { describe, expect, it } from "vitest";
import { RunEvents } from "./run-events.js";

describe("RunEvents", () => {
  it("runEndedElsewhere stops local work on the run and wakes its waiters and the loops", () => {
    const events = new RunEvents();
    const heard: string[] = [];
    events.onCancelRequested("run_a", () => heard.push("stop a"));
    events.onCancelRequested("run_b", () => heard.push("stop b"));
    events.onRunEnded("run_a", () => heard.push("ended a"));
    events.on("ended", () => heard.push("ended"));
    events.runEndedElsewhere("run_a");
    expect(heard).toEqual(["stop a", "ended a", "ended"]);
  });
});
