/**
 * The worker's generation and download slots, on their own: a run that downloads gives up its
 * generation slot, an organization holds at most half of the download slots, and a run whose
 * references are ready takes the next generation slot ahead of new claims.
 */
import { describe, expect, it } from "vitest";
import { DownloadsFull, WorkerSlots } from "./slots.js";

/** A download the test ends by hand. */
function held<T>(value: T) {
  let finish: () => void = () => {};
  let fail: (err: Error) => void = () => {};
  const done = new Promise<T>((resolve, reject) => {
    finish = () => resolve(value);
    fail = reject;
  });
  return { run: () => done, finish, fail };
}

function slots(generation: number, downloads: number) {
  const freed: number[] = [];
  const s = new WorkerSlots(generation, downloads, () => freed.push(1));
  return { s, freed };
}

const never = new AbortController().signal;
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("the worker's slots", () => {
  it.each([
    // [generation, downloads, organization's share]
    [4, 8, 4],
    [4, 6, 3],
    [2, 3, 2],
    [1, 1, 1],
  ])("with %i generation and %i download slots gives one organization %i of the downloads", (g, d, share) => {
    expect(new WorkerSlots(g, d, () => {}).organizationShare).toBe(share);
  });

  it("frees a run's generation slot while it downloads, for the claim loop", async () => {
    const { s, freed } = slots(2, 4);
    s.claimed({ id: "a1", organizationId: "A" });
    s.claimed({ id: "b1", organizationId: "B" });
    expect(s.claimable).toBe(0);
    const download = held(["ref"]);
    const references = s.download("a1", never, download.run);
    expect(s.claimable).toBe(1);
    expect(freed).toHaveLength(1);
    download.finish();
    expect(await references).toEqual(["ref"]);
    expect(s.claimable).toBe(0); // a1 generates again
  });

  it("refuses a download beyond the organization's half of the download slots, and when all are taken", async () => {
    const { s } = slots(8, 4);
    for (const id of ["a1", "a2", "a3", "b1", "b2", "c1"])
      s.claimed({ id, organizationId: (id[0] as string).toUpperCase() });
    const a1 = held(null);
    const a2 = held(null);
    void s.download("a1", never, a1.run);
    void s.download("a2", never, a2.run);
    expect(s.organizationsAtShare()).toEqual(["A"]);
    await expect(s.download("a3", never, async () => null)).rejects.toBeInstanceOf(DownloadsFull);
    const b1 = held(null);
    const b2 = held(null);
    void s.download("b1", never, b1.run);
    void s.download("b2", never, b2.run);
    expect(s.downloadsFull).toBe(true);
    const refused = await s.download("c1", never, async () => null).catch((e: unknown) => e);
    expect(refused).toMatchObject({ organizationId: "C" });
    // a3 and c1 were refused before downloading: they still hold their generation slots.
    expect(s.claimable).toBe(8 - 2);
    a1.finish();
    await turn();
    expect(s.downloadsFull).toBe(false);
    expect(s.organizationsAtShare()).toEqual(["B"]);
  });

  it("gives a run whose references are ready the next generation slot, ahead of new claims", async () => {
    const { s, freed } = slots(1, 4);
    s.claimed({ id: "a1", organizationId: "A" });
    const a1 = held("a1's");
    const a1Ready = s.download("a1", never, a1.run);
    s.claimed({ id: "b1", organizationId: "B" }); // claimed into the slot a1 gave up
    a1.finish();
    let a1Generates = false;
    void a1Ready.then(() => {
      a1Generates = true;
    });
    await turn();
    expect(a1Generates).toBe(false);
    expect(s.claimable).toBe(-1); // b1 generates and a1 waits: nothing more is claimed
    const before = freed.length;
    s.let("b1");
    expect(await a1Ready).toBe("a1's");
    expect(freed).toHaveLength(before); // the slot went to a1, not to the claim loop
    expect(s.claimable).toBe(0);
    s.let("a1");
    expect(s.claimable).toBe(1);
    expect(freed.length).toBeGreaterThan(before);
  });

  it("stops a run's wait for a generation slot when its run is stopped", async () => {
    const { s } = slots(1, 4);
    s.claimed({ id: "a1", organizationId: "A" });
    const stop = new AbortController();
    const a1 = s.download("a1", stop.signal, async () => "refs");
    s.claimed({ id: "b1", organizationId: "B" });
    await turn();
    stop.abort(new Error("cancelled"));
    await expect(a1).rejects.toThrow("cancelled");
    s.let("a1");
    expect(s.claimable).toBe(0); // b1 still holds the one slot; nothing leaked either way
    s.let("b1");
    expect(s.claimable).toBe(1);
  });

  it("lets a failed download end without taking a generation slot", async () => {
    const { s } = slots(1, 2);
    s.claimed({ id: "a1", organizationId: "A" });
    const a1 = held(null);
    const failed = s.download("a1", never, a1.run);
    s.claimed({ id: "b1", organizationId: "B" });
    a1.fail(new Error("could not be downloaded"));
    await expect(failed).rejects.toThrow("could not be downloaded");
    expect(s.downloadsFull).toBe(false);
    expect(s.claimable).toBe(0);
    s.let("a1");
    expect(s.claimable).toBe(0);
  });
});
