import { describe, expect, it } from "vitest";
import { ManualClock } from "./manual-clock.js";
import { pollUntil } from "./poll-until.js";

const T0 = new Date("2030-01-01T00:00:00.000Z");

/** A check that answers `undefined` until `ready` is set, recording when it was called. */
function check(clock: ManualClock) {
  const calls: number[] = [];
  const state = { ready: false, calls };
  const fn = async () => {
    calls.push(clock.now().getTime() - T0.getTime());
    return state.ready ? "done" : undefined;
  };
  return { state, fn };
}

describe("pollUntil", () => {
  it("answers the check's first value", async () => {
    const clock = new ManualClock(T0);
    const c = check(clock);
    c.state.ready = true;
    const signal = new AbortController().signal;
    expect(await pollUntil(clock, c.fn, { signal, firstDelayMs: 250, maxDelayMs: 2000 })).toBe("done");
    expect(c.state.calls).toEqual([0]);
  });

  it("checks again after doubling waits, up to the maximum", async () => {
    const clock = new ManualClock(T0);
    const c = check(clock);
    const signal = new AbortController().signal;
    const result = pollUntil(clock, c.fn, { signal, firstDelayMs: 250, maxDelayMs: 2000 });
    await clock.advance(7750);
    expect(c.state.calls).toEqual([0, 250, 750, 1750, 3750, 5750, 7750]);
    c.state.ready = true;
    await clock.advance(2000);
    expect(await result).toBe("done");
    expect(clock.pendingTimers).toBe(0);
  });

  it("checks at once when woken, even by a wake-up that came during a check", async () => {
    const clock = new ManualClock(T0);
    const calls: number[] = [];
    let wake: () => void = () => {};
    let answer: string | undefined;
    const signal = new AbortController().signal;
    const result = pollUntil(
      clock,
      async () => {
        calls.push(calls.length);
        if (calls.length === 2) wake(); // the run ends while the second check reads the store
        return calls.length === 3 ? answer : undefined;
      },
      {
        signal,
        firstDelayMs: 250,
        maxDelayMs: 2000,
        wake: (fn) => {
          wake = fn;
          return () => {
            wake = () => {};
          };
        },
      },
    );
    await clock.advance(0);
    expect(calls).toHaveLength(1);
    answer = "ended";
    wake();
    expect(await result).toBe("ended");
    expect(calls).toHaveLength(3);
    expect(clock.now()).toEqual(T0); // no time passed
  });

  it("answers null once its signal aborts", async () => {
    const clock = new ManualClock(T0);
    const c = check(clock);
    const controller = new AbortController();
    const result = pollUntil(clock, c.fn, { signal: controller.signal, firstDelayMs: 250, maxDelayMs: 2000 });
    await clock.advance(100);
    controller.abort();
    expect(await result).toBeNull();
    expect(clock.pendingTimers).toBe(0);
  });
});
