/**
 * A Cog server that ignores cancel of a held prediction (like Cog 0.12: it serves nothing while a
 * held sync prediction runs), behind the real refvid with a route to it. A run cancelled while its
 * prediction runs ends `cancelled` and uncharged at once, but the prediction runs on: /readyz shows
 * the box busy with it, and a run submitted meanwhile waits in the queue, never sending the box a
 * second prediction, then succeeds once the first ended.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { type CogServer, startCogServer } from "./vendors/cog-server.js";
import { writeCogRoutes } from "./vendors/cog-stack.js";

const PATH = "/v1/run/lab-d/model-d/reference-to-video";
const INPUT = { prompt: "a long take", image_urls: ["https://example.com/ref.png"], duration: "4s" };

let cog: CogServer;
let dir: string;
let t: TestRefvid;
let tenant: Tenant;

beforeAll(async () => {
  cog = await startCogServer({
    knobs: { flavor: "python-0.12", latencyMs: 150, outputSeconds: 3, outputAs: "url" },
  });
  dir = await mkdtemp(join(tmpdir(), "refvid-cog-0.12-"));
  const file = await writeCogRoutes(dir, cog.url);

  t = await startTestRefvid({ REFVID_PROVIDERS_FILE: file, REFVID_UPSTREAM_POLL_MS: "25" });
  tenant = await t.tenant({ environment: "live", rateLimitPerMinute: 100_000, balanceUsd: "100.00" });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await cog?.close();
  await rm(dir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
}, 60_000);

interface Box {
  predictions: string;
  busy_uncancellable: { prediction_id: string; since: string } | null;
}

async function box(): Promise<Box | undefined> {
  const body = (await (await fetch(`${t.url}/readyz`)).json()) as { boxes?: Record<string, Box> };
  return body.boxes?.["gpu-box"];
}

async function run(id: string) {
  return (await tenant.call("GET", `/v1/runs/${id}`)).body;
}

it("a run cancelled while the box ignores the cancel: the next run waits for the box, then succeeds", async () => {
  // Vendor webhooks are off (the test's public URL is loopback): held predictions.
  expect(await box()).toEqual({ predictions: "sync_webhooks_off", busy_uncancellable: null });
  const balance = (await tenant.call("GET", "/v1/account")).body.wallet.balance_usd;
  cog.knobs.latencyMs = 600_000; // ended by the test below, once everything was seen
  const first = (await tenant.call("POST", PATH, { input: INPUT })).body.run_id as string;
  await eventually(async () => cog.jobsFor(first)[0], 20_000, "the box to run the first prediction");
  cog.knobs.latencyMs = 150;

  const cancelled = await tenant.call("POST", `/v1/runs/${first}/cancel`);
  expect(cancelled.body).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });
  const second = (await tenant.call("POST", PATH, { input: INPUT })).body.run_id as string;

  const busy = await eventually(
    async () => (await box())?.busy_uncancellable ?? undefined,
    20_000,
    "/readyz to show the box busy",
  );
  expect(busy).toEqual({ prediction_id: first, since: expect.any(String) });
  expect(Number.isNaN(Date.parse(busy.since))).toBe(false);
  // The second run is back in the queue, its prediction never sent: the box has nothing waiting
  // for it, nor ever ran it.
  await eventually(
    async () => ((await run(second)).status === "queued" ? true : undefined),
    20_000,
    "the second run to wait in the queue",
  );
  expect(cog.stats.waiting.filter((request) => request.includes(second))).toEqual([]);
  expect(cog.jobsFor(second)).toEqual([]);

  cog.finishNow(first); // the model reaches its end: the cancel was never heard
  const done = await eventually(
    async () => {
      const r = await run(second);
      return r.status === "succeeded" || r.status === "failed" ? r : undefined;
    },
    30_000,
    "the second run to end",
  );
  expect(done).toMatchObject({ status: "succeeded", billing: { amount: "0.213" } });
  await eventually(
    async () => ((await box())?.busy_uncancellable === null ? true : undefined),
    20_000,
    "/readyz to show the box clear",
  );

  expect(await run(first)).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });
  const after = (await tenant.call("GET", "/v1/account")).body.wallet.balance_usd;
  expect(Number(balance) - Number(after)).toBeCloseTo(0.213, 3);
  expect(cog.jobsFor(first)).toMatchObject([{ status: "succeeded", cancelled: false }]);
  expect(cog.jobsFor(second)).toMatchObject([{ status: "succeeded" }]);
  expect(cog.stats).toMatchObject({ submits: 2, conflicts: 0, cancels: 0 });
  expect(cog.stats.maxRunning).toBeLessThanOrEqual(1);
}, 90_000);
