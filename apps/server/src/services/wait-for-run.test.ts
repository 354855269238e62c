import { failed } from "@refvid/store/testing";
import { afterEach, describe, expect, it } from "vitest";
import { type LoopHarness, loopHarness } from "../../test/loop-harness.js";
import { RunEndWaits } from "./wait-for-run.js";

let h: LoopHarness | undefined;
afterEach(async () => h?.close());

const end = (harness: LoopHarness, runId: string) =>
  harness.store.completeRun({ runId, outcome: failed, now: harness.clock.now() });

describe("RunEndWaits", () => {
  it("answers every waiter of a run when its end is signalled, and forgets them", async () => {
    h = await loopHarness();
    const waits = new RunEndWaits(h.deps, new AbortController().signal);
    const runId = await h.admit();
    const answers = Promise.all([waits.wait(h.organizationId, runId), waits.wait(h.organizationId, runId)]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits.size).toBe(2);
    await end(h, runId); // the store's ended event
    expect((await answers).map((run) => run?.status)).toEqual(["failed", "failed"]);
    expect(waits.size).toBe(0);
  });

  it("finds an end nobody signalled at the next backstop pass, and one that came before the wait at once", async () => {
    h = await loopHarness();
    const waits = new RunEndWaits(h.deps, new AbortController().signal, 1000);
    const early = await h.admit();
    await end(h, early);
    expect((await waits.wait(h.organizationId, early))?.status).toBe("failed");

    const late = await h.admit();
    let answered: string | undefined;
    void waits.wait(h.organizationId, late).then((run) => {
      answered = run?.status;
    });
    await h.clock.advance(999);
    const harness = h;
    await harness.unheard(() => end(harness, late)); // no event
    await h.clock.advance(0);
    expect(answered).toBeUndefined();
    await h.clock.advance(1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe("failed");
  });

  it("answers null to every waiter when the server shuts down, and to any new one", async () => {
    h = await loopHarness();
    const shutdown = new AbortController();
    const waits = new RunEndWaits(h.deps, shutdown.signal);
    const runId = await h.admit();
    const waiting = waits.wait(h.organizationId, runId);
    shutdown.abort();
    expect(await waiting).toBeNull();
    expect(await waits.wait(h.organizationId, runId)).toBeNull();
  });

  it("rejects the run's waiters, and forgets them, when the run cannot be read for any reason but a lost connection", async () => {
    h = await loopHarness();
    const runId = await h.admit();
    const broken = new Error("corrupt row");
    const store = { ...h.deps.store, getRun: () => Promise.reject(broken) };
    const waits = new RunEndWaits({ ...h.deps, store } as typeof h.deps, new AbortController().signal);
    await expect(waits.wait(h.organizationId, runId)).rejects.toBe(broken);
    expect(waits.size).toBe(0);
  });
});
