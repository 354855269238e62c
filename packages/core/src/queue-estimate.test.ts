import { describe, expect, it } from "vitest";
import { durationStats, estimateQueue } from "./queue-estimate.js";

const now = new Date("2026-11-26T10:00:00.000Z");
const after = (date: Date) => date.getTime() - now.getTime();
const window60 = Array.from({ length: 50 }, (_, i) => 50_000 + i * 400); // 50 s to 69.6 s

describe("durationStats", () => {
  it("gives nothing on fewer than three runs, then mean, spread and quantiles", () => {
    expect(durationStats([1000, 2000])).toBeNull();
    expect(durationStats([3000, 1000, 2000])).toEqual({
      count: 3,
      meanMs: 2000,
      sdMs: 1000,
      p50Ms: 2000,
      p90Ms: 2800,
    });
  });
});

describe("estimateQueue", () => {
  it("starts now when a slot is free and nobody is ahead", () => {
    const e = estimateQueue({ now, ahead: 0, capacity: 2, runningElapsedMs: [10_000], samplesMs: window60 });
    expect(after(e?.start.p50 as Date)).toBe(0);
    expect(after(e?.end.p50 as Date)).toBeCloseTo(59_800, -2);
  });

  it("waits for the run holding the slot to end, by what such runs still take", () => {
    const fresh = estimateQueue({ now, ahead: 0, capacity: 1, runningElapsedMs: [0], samplesMs: window60 });
    const late = estimateQueue({
      now,
      ahead: 0,
      capacity: 1,
      runningElapsedMs: [60_000],
      samplesMs: window60,
    });
    expect(after(fresh?.start.p50 as Date)).toBeCloseTo(59_800, -2);
    expect(after(late?.start.p50 as Date)).toBeLessThan(10_000);
    expect(after(late?.start.p90 as Date)).toBeGreaterThanOrEqual(after(late?.start.p50 as Date));
  });

  it.each([0, 1, 5, 20, 200])("orders p50 before p90, start before end, and grows with %i ahead", (ahead) => {
    const e = estimateQueue({
      now,
      ahead,
      capacity: 4,
      runningElapsedMs: [1, 2, 3, 4].map((s) => s * 10_000),
      samplesMs: window60,
    });
    const more = estimateQueue({
      now,
      ahead: ahead + 4,
      capacity: 4,
      runningElapsedMs: [10_000, 20_000, 30_000, 40_000],
      samplesMs: window60,
    });
    if (!e || !more) throw new Error("no estimate");
    expect(e.start.p50.getTime()).toBeLessThanOrEqual(e.start.p90.getTime());
    expect(e.start.p90.getTime()).toBeLessThan(e.end.p90.getTime());
    expect(e.start.p50.getTime()).toBeLessThan(e.end.p50.getTime());
    // Four more ahead on four slots: about one mean duration later.
    expect(more.start.p50.getTime() - e.start.p50.getTime()).toBeCloseTo(59_800, -2);
  });

  it("stretches the wait by the load of runs that overtake, and widens its range", () => {
    const base = { now, ahead: 6, capacity: 2, runningElapsedMs: [10_000, 30_000], samplesMs: window60 };
    const plain = estimateQueue(base);
    // One overtaking run a minute on two slots of 60 s runs: half the capacity, so twice the wait.
    const overtaken = estimateQueue({ ...base, overtakeRatePerMs: 1 / 59_800 });
    if (!plain || !overtaken) throw new Error("no estimate");
    expect(after(overtaken.start.p50)).toBeCloseTo(2 * after(plain.start.p50), -2);
    expect(after(overtaken.start.p90) - after(overtaken.start.p50)).toBeGreaterThan(
      2 * (after(plain.start.p90) - after(plain.start.p50)),
    );
  });

  it("gives no estimate without history", () => {
    expect(estimateQueue({ now, ahead: 3, capacity: 2, runningElapsedMs: [], samplesMs: [1000] })).toBeNull();
  });
});
