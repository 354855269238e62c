import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { ManualClock } from "./manual-clock.js";
import { PeriodicTask } from "./periodic-task.js";

const T0 = new Date("2030-01-01T00:00:00.000Z");

/** A step whose runs the test ends by hand, recording when each began. */
function heldStep(clock: ManualClock) {
  const starts: number[] = [];
  const pending: (() => void)[] = [];
  let running = 0;
  let overlapped = false;
  return {
    starts,
    get overlapped() {
      return overlapped;
    },
    step: () => {
      starts.push(clock.now().getTime() - T0.getTime());
      running += 1;
      if (running > 1) overlapped = true;
      return new Promise<void>((resolve) =>
        pending.push(() => {
          running -= 1;
          resolve();
        }),
      );
    },
    /** Ends the run in progress. */
    finish() {
      pending.shift()?.();
    },
  };
}

function setup(step: () => Promise<void>, intervalMs = 1000) {
  const clock = new ManualClock(T0);
  const logs: { level: number; msg: string; err?: { message: string } }[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk, _encoding, done) {
        logs.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  const task = new PeriodicTask({
    intervalMs,
    scheduler: clock,
    logger,
    failureMessage: "the step failed",
    step,
  });
  return { clock, task, logs };
}

describe("PeriodicTask", () => {
  it("runs the step every interval, counted from the end of the previous run", async () => {
    const clock = new ManualClock(T0);
    const held = heldStep(clock);
    const task = new PeriodicTask({
      intervalMs: 1000,
      scheduler: clock,
      logger: pino({ level: "silent" }),
      failureMessage: "failed",
      step: held.step,
    });
    task.start();
    await clock.advance(999);
    expect(held.starts).toEqual([]);
    await clock.advance(1);
    expect(held.starts).toEqual([1000]);
    await clock.advance(5000); // the run takes 5 s: no second run meanwhile
    expect(held.starts).toEqual([1000]);
    held.finish();
    await clock.advance(999);
    expect(held.starts).toEqual([1000]);
    await clock.advance(1);
    expect(held.starts).toEqual([1000, 7000]);
    expect(held.overlapped).toBe(false);
    held.finish();
    await task.stop();
  });

  it("runs at once when started with `immediately`", async () => {
    let runs = 0;
    const { clock, task } = setup(async () => {
      runs += 1;
    });
    task.start({ immediately: true });
    await clock.advance(0);
    expect(runs).toBe(1);
    await clock.advance(1000);
    expect(runs).toBe(2);
    await task.stop();
  });

  it("runs at once when triggered, and counts the next interval from that run", async () => {
    const starts: number[] = [];
    const { clock, task } = setup(async () => {
      starts.push(clock.now().getTime() - T0.getTime());
    });
    task.start();
    await clock.advance(600);
    await task.trigger();
    expect(starts).toEqual([600]);
    await clock.advance(999);
    expect(starts).toEqual([600]);
    await clock.advance(1);
    expect(starts).toEqual([600, 1600]);
    await task.stop();
  });

  it("coalesces triggers that arrive during a run into one more run right after it", async () => {
    const clock = new ManualClock(T0);
    const held = heldStep(clock);
    const task = new PeriodicTask({
      intervalMs: 1000,
      scheduler: clock,
      logger: pino({ level: "silent" }),
      failureMessage: "failed",
      step: held.step,
    });
    task.start();
    const first = task.trigger();
    const during = [task.trigger(), task.trigger(), task.trigger()];
    expect(held.starts).toEqual([0]);
    held.finish();
    await first;
    await clock.advance(0);
    expect(held.starts).toEqual([0, 0]); // one more run, not three
    let secondDone = false;
    const all = Promise.all(during).then(() => {
      secondDone = true;
    });
    await clock.advance(0);
    expect(secondDone).toBe(false); // those triggers wait for the run that began after them
    held.finish();
    await all;
    expect(held.overlapped).toBe(false);
    await clock.advance(1000);
    expect(held.starts).toEqual([0, 0, 1000]);
    held.finish();
    await task.stop();
  });

  it("logs a step that throws and goes on running", async () => {
    let runs = 0;
    const { clock, task, logs } = setup(async () => {
      runs += 1;
      if (runs <= 2) throw new Error(`boom ${runs}`);
    });
    task.start();
    await clock.advance(3000);
    expect(runs).toBe(3);
    expect(logs.filter((l) => l.msg === "the step failed").map((l) => l.err?.message)).toEqual([
      "boom 1",
      "boom 2",
    ]);
    expect(logs.every((l) => l.level === 50)).toBe(true);
    await task.stop();
  });

  it("stop waits for the run in progress and ends the schedule", async () => {
    const clock = new ManualClock(T0);
    const held = heldStep(clock);
    const task = new PeriodicTask({
      intervalMs: 1000,
      scheduler: clock,
      logger: pino({ level: "silent" }),
      failureMessage: "failed",
      step: held.step,
    });
    task.start();
    await clock.advance(1000);
    expect(held.starts).toEqual([1000]);
    let stopped = false;
    const stopping = task.stop().then(() => {
      stopped = true;
    });
    await clock.advance(0);
    expect(stopped).toBe(false);
    held.finish();
    await stopping;
    expect(clock.pendingTimers).toBe(0);
    await task.trigger(); // ignored once stopped
    await clock.advance(10_000);
    expect(held.starts).toEqual([1000]);
  });
});
