/**
 * Slow references (issue 26, finding 3): one organization whose references trickle in, just fast
 * enough, must not keep another organization's run from starting; and a reference that trickles
 * below the minimum transfer rate fails its run with the reference error, uncharged, long before
 * the download timeout. A real HTTP server trickles the bytes; the real worker downloads them.
 */
import { mkdtemp } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Run } from "@refvid/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_POLL_MS } from "../src/worker/worker.js";
import { eventually, startTestRefvid, type TestRefvid } from "./harness.js";
import { referenceReading } from "./reference-reading.js";

const MODEL = "lab-d/model-d/reference-to-video";
const SLOTS = 4;
/** Download slots apart from the generation slots; one organization may hold half of them. */
const DOWNLOAD_SLOTS = 6;
/** The floor the test configures, and the window it is averaged over. */
const MIN_RATE = 4096;
const WINDOW_MS = 1000;
/** A's references arrive at twenty times the floor: slow, but never cut off. */
const TRICKLE_CHUNK = 4096;
const TRICKLE_EVERY_MS = 50;
/** The crawling reference: 640 bytes/s, a sixth of the floor. */
const CRAWL_CHUNK = 64;
const CRAWL_EVERY_MS = 100;
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex");

let t: TestRefvid;
let files: Server;
let base: string;
/** The trickling downloads in progress, each with the way to finish it at full speed. */
const trickling = new Set<() => void>();
let mostTrickling = 0;

beforeAll(async () => {
  files = createServer((req, res) => {
    if (req.url === "/fast.png") return res.end(Buffer.concat([PNG, Buffer.alloc(64)]));
    const slow = req.url?.startsWith("/slow/");
    if (!slow && req.url !== "/crawl.png") return res.writeHead(404).end();
    res.writeHead(200, { "content-type": "image/png" });
    res.write(PNG);
    const timer = setInterval(
      () => res.write(Buffer.alloc(slow ? TRICKLE_CHUNK : CRAWL_CHUNK)),
      slow ? TRICKLE_EVERY_MS : CRAWL_EVERY_MS,
    );
    const finish = () => {
      clearInterval(timer);
      res.end(Buffer.alloc(64));
    };
    if (slow) {
      trickling.add(finish);
      mostTrickling = Math.max(mostTrickling, trickling.size);
    }
    res.on("close", () => {
      clearInterval(timer);
      trickling.delete(finish);
    });
  });
  await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  const provider = referenceReading(await mkdtemp(join(tmpdir(), "sim-")));
  t = await startTestRefvid(
    {
      REFVID_WORKER_CONCURRENCY: String(SLOTS),
      REFVID_WORKER_DOWNLOAD_SLOTS: String(DOWNLOAD_SLOTS),
      REFVID_MIN_DOWNLOAD_BYTES_PER_S: String(MIN_RATE),
      REFVID_MIN_DOWNLOAD_WINDOW_MS: String(WINDOW_MS),
    },
    { providers: { [MODEL]: provider } },
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
  files.closeAllConnections();
  await new Promise((resolve) => files.close(resolve));
  expect(t.mismatches).toEqual([]);
});

const submit = (tenant: Awaited<ReturnType<TestRefvid["tenant"]>>, url: string) =>
  tenant.client.submit(MODEL, { prompt: "p", image_urls: [url], duration: "4s" });

describe("slow references", () => {
  it("do not keep another organization's run from starting while they download", async () => {
    // Test runs, as the red team's were; the keys poll, so their rate limit is raised.
    const a = await t.tenant({ environment: "test", maxConcurrency: 20, rateLimitPerMinute: 10_000 });
    const b = await t.tenant({ rateLimitPerMinute: 10_000 });
    const slow: Run[] = [];
    for (let i = 0; i < SLOTS + 2; i++) slow.push(await submit(a, `${base}/slow/${i}.png`));
    // A's references are downloading, as many as the worker lets them, before B comes.
    await eventually(async () => (trickling.size >= Math.min(SLOTS, DOWNLOAD_SLOTS / 2) ? true : undefined));

    const submitted = Date.now();
    const fast = await submit(b, `${base}/fast.png`);
    const started = await eventually(
      async () => {
        const run = await b.client.getRun(fast.run_id);
        return run.status === "processing" || run.status === "succeeded" ? run : undefined;
      },
      10 * DEFAULT_POLL_MS,
      "B's run to start while A's references trickle in",
    );
    const waited = Date.now() - submitted;
    // A's references are still coming in: B did not start because one of them finished.
    expect(trickling.size).toBeGreaterThan(0);
    // A never held more than its half of the download slots; its other runs waited in the queue.
    expect(mostTrickling).toBeLessThanOrEqual(DOWNLOAD_SLOTS / 2);
    for (const run of slow) expect((await a.client.getRun(run.run_id)).status).toMatch(/queued|processing/);
    expect(started.status).toMatch(/processing|succeeded/);
    expect(waited).toBeLessThan(10 * DEFAULT_POLL_MS);

    expect((await b.client.waitForRun(fast.run_id, { pollIntervalMs: 50 })).status).toBe("succeeded");
    // Let A's references finish: every one of A's runs then gets a slot and succeeds.
    const release = setInterval(() => {
      for (const finish of trickling) finish();
    }, 50);
    try {
      for (const run of slow) {
        const done = await a.client.waitForRun(run.run_id, { pollIntervalMs: 100, timeoutMs: 60_000 });
        expect(done.status).toBe("succeeded");
      }
    } finally {
      clearInterval(release);
    }
  }, 120_000);

  it("fails a run whose reference arrives below the minimum rate, naming it, uncharged", async () => {
    const c = await t.tenant({ balanceUsd: "10.00", rateLimitPerMinute: 10_000 });
    const began = Date.now();
    const run = await c.client.run(
      MODEL,
      { prompt: "p", image_urls: [`${base}/crawl.png`], duration: "4s" },
      { pollIntervalMs: 100, throwOnFailure: false },
    );
    const took = Date.now() - began;
    expect(run).toMatchObject({
      status: "failed",
      billing: { amount: "0.00" },
      error: { type: "invalid_reference_media", code: 422 },
    });
    expect(run.error?.message).toMatch(
      /input\.image_urls\[0\] \(http:\/\/127\.0\.0\.1:\d+\/crawl\.png\) could not be downloaded: .*4096 bytes\/s/,
    );
    // Cut off by the rate floor after its first window, not by the 60 s download timeout.
    expect(took).toBeLessThan(WINDOW_MS + 15_000);
    const account = await c.client.getAccount();
    expect(account.wallet).toMatchObject({ balance_usd: "10.00", reserved_usd: "0.00" });
  }, 120_000);
});
