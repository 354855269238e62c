import { describe, expect, it } from "vitest";
import { sleep } from "./clock.js";
import { ManualClock } from "./manual-clock.js";

const T0 = new Date("2030-01-01T00:00:00.000Z");

describe("ManualClock", () => {
  it("reads the time it was given and moves only when advanced", async () => {
    const clock = new ManualClock(T0);
    expect(clock.now()).toEqual(T0);
    await clock.advance(1500);
    expect(clock.now()).toEqual(new Date(T0.getTime() + 1500));
  });

  it("runs each timer that falls due, in order of due time and then of setting, at its due time", async () => {
    const clock = new ManualClock(T0);
    const ran: [string, number][] = [];
    const at = (name: string) => () => ran.push([name, clock.now().getTime() - T0.getTime()]);
    clock.setTimeout(at("c"), 300);
    clock.setTimeout(at("a"), 100);
    clock.setTimeout(at("b1"), 200);
    clock.setTimeout(at("b2"), 200);
    clock.setTimeout(at("late"), 1000);
    await clock.advance(999);
    expect(ran).toEqual([
      ["a", 100],
      ["b1", 200],
      ["b2", 200],
      ["c", 300],
    ]);
    expect(clock.pendingTimers).toBe(1);
    await clock.advance(1);
    expect(ran.at(-1)).toEqual(["late", 1000]);
    expect(clock.pendingTimers).toBe(0);
  });

  it("does not run a cancelled timer", async () => {
    const clock = new ManualClock(T0);
    let ran = false;
    const cancel = clock.setTimeout(() => {
      ran = true;
    }, 10);
    cancel();
    await clock.advance(100);
    expect(ran).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it("runs a zero-delay timer on the next advance, not when it is set", async () => {
    const clock = new ManualClock(T0);
    let ran = false;
    clock.setTimeout(() => {
      ran = true;
    }, 0);
    expect(ran).toBe(false);
    await clock.advance(0);
    expect(ran).toBe(true);
  });

  it("lets an async loop make progress between timers: timers it sets inside the window run too", async () => {
    const clock = new ManualClock(T0);
    const ticks: number[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await sleep(clock, 100);
        await Promise.resolve(); // some async work after each wake-up
        await new Promise((resolve) => setImmediate(resolve));
        ticks.push(clock.now().getTime() - T0.getTime());
      }
    })();
    await clock.advance(450);
    expect(ticks).toEqual([100, 200, 300, 400]);
    stop = true;
    await clock.advance(100);
    await loop;
  });

  it("wakes a sleep early when its signal aborts", async () => {
    const clock = new ManualClock(T0);
    const controller = new AbortController();
    let woke = false;
    const slept = sleep(clock, 60_000, controller.signal).then(() => {
      woke = true;
    });
    await clock.advance(1000);
    expect(woke).toBe(false);
    controller.abort();
    await slept;
    expect(clock.pendingTimers).toBe(0);
  });
});
