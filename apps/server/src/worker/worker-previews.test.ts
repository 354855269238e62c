/**
 * The worker's previews of a succeeded run (previews.ts): stored beside a video ffmpeg reads, left
 * out without failing the run when it cannot, and deleted with the video when the run's end is
 * not this worker's.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type LoopHarness, loopHarness } from "../../test/loop-harness.js";
import { ffmpeg } from "../media/ffmpeg.js";
import { Worker } from "./worker.js";

const LEASE_MS = 30_000;
const harnesses: LoopHarness[] = [];
const workers: Worker[] = [];
let dir: string;
let video: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "worker-previews-"));
  video = join(dir, "video.mp4");
  const source = "testsrc2=size=320x180:rate=10:duration=4";
  await ffmpeg(["-f", "lavfi", "-i", source, "-c:v", "libx264", "-preset", "ultrafast", video], {
    timeoutMs: 60_000,
  });
}, 60_000);

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop(0);
  for (const h of harnesses.splice(0)) await h.close();
});

afterAll(() => rm(dir, { recursive: true, force: true }));

async function setup() {
  const h = await loopHarness();
  harnesses.push(h);
  const worker = new Worker(h.deps, { workerId: "w1", concurrency: 1, leaseMs: LEASE_MS, pollMs: 1000 });
  workers.push(worker);
  worker.start();
  return h;
}

describe("a succeeded run's previews", () => {
  it("are stored as JPEGs beside the video and named in its output", async () => {
    const { provider, admit, ended, runOf, blobs, deps } = await setup();
    const id = await admit();
    const end = ended(id);
    await (await provider.started()).finish(4, video);
    await end;
    const output = (await runOf(id))?.output;
    expect(output).toMatchObject({
      thumbnailFileId: expect.any(String),
      spritesheetFileId: expect.any(String),
    });
    expect(blobs.put).toEqual([output?.fileId, output?.thumbnailFileId, output?.spritesheetFileId]);
    for (const id of [output?.thumbnailFileId, output?.spritesheetFileId]) {
      expect(await deps.blobs.stat(id as string)).toMatchObject({ contentType: "image/jpeg" });
    }
  });

  it("are left out, with a warning, when ffmpeg cannot read the video: the run still succeeds", async () => {
    const { provider, admit, ended, runOf, blobs, logs } = await setup();
    const id = await admit();
    const end = ended(id);
    await (await provider.started()).finish(4);
    await end;
    const run = await runOf(id);
    expect(run).toMatchObject({ status: "succeeded", charged: 400_000 });
    expect(run?.output).not.toHaveProperty("thumbnailFileId");
    expect(blobs.put).toEqual([run?.output?.fileId]);
    expect(logs.map((l) => l.msg)).toContain(
      "could not render the run's poster and sprite sheet; the video goes without them",
    );
  });

  it("are deleted with the video when the run was taken over meanwhile", async () => {
    const h = await setup();
    const { provider, admit, runOf, blobs, deps, clock } = h;
    const id = await admit();
    const job = await provider.started();
    // Another process's worker takes the run over before this process hears of the requeue.
    const far = new Date(clock.now().getTime() + 10 * LEASE_MS);
    await h.unheard(async () => {
      await deps.store.requeueExpiredLeases({ now: far, maxAttempts: 10, limit: 10 });
      return deps.store.claimRuns({ workerId: "w2", limit: 10, leaseMs: LEASE_MS, now: clock.now() });
    });
    await job.finish(4, video); // before this worker's next heartbeat
    await workers[0]?.stop(10_000);
    expect(blobs.put).toHaveLength(3);
    expect(blobs.deleted.toSorted()).toEqual(blobs.put.toSorted());
    for (const fileId of blobs.put) expect(await deps.blobs.stat(fileId)).toBeNull();
    expect(await runOf(id)).toMatchObject({ status: "processing", leaseOwner: "w2" });
  });
});
