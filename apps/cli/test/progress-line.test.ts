/** The plain progress line: status, progress, and where the run stands in a queue. */
import type { Run } from "@refvid/client";
import { describe, expect, it } from "vitest";
import { statusLine } from "../src/progress.js";

const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false });
const base = { run_id: "run_1", progress: null } as unknown as Run;
const at = (s: number) => new Date(Date.UTC(2026, 10, 26, 10, 0, s)).toISOString();

describe("statusLine", () => {
  it.each<[string, Partial<Run>, string]>([
    ["a queued run without history", { status: "queued", queue_position: 3 }, "run_1 queued · 3 ahead"],
    [
      "a queued run with its estimated start",
      {
        status: "queued",
        queue_position: 0,
        estimated_start_at: { p50: at(5), p90: at(40) },
        estimated_end_at: { p50: at(65), p90: at(100) },
      },
      `run_1 queued · 0 ahead · starts ~${clock(at(5))} (by ${clock(at(40))})`,
    ],
    [
      "a processing run in its vendor's queue",
      { status: "processing", progress: 0, queue_position: 2 },
      "run_1 processing 0% · 2 ahead in the vendor's queue",
    ],
    ["a processing run", { status: "processing", progress: 0.45 }, "run_1 processing 45%"],
    ["a run that succeeded", { status: "succeeded", progress: 1 }, "run_1 succeeded 100%"],
  ])("%s", (_name, run, line) => {
    expect(statusLine({ ...base, ...run } as Run)).toBe(line);
  });
});
