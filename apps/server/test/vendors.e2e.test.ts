/**
 * refvid in front of real vendor protocols: the fal queue API, Replicate's predictions API and a
 * Cog container, each a local server written from the vendor's public docs. Through the real
 * server and the routing file: a run per vendor succeeds and is billed by the delivered length;
 * a route whose vendor refuses the job falls back to the next; a vendor failure is uncharged; a
 * cancel reaches the vendor; a test key never reaches one.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../src/media/ffmpeg.js";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { type CogServer, startCogServer } from "./vendors/cog-server.js";
import { type FalServer, startFalServer } from "./vendors/fal-server.js";
import { type ReplicateServer, startReplicateServer } from "./vendors/replicate-server.js";

const FAL_ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const IMG = "https://example.com/ref.png";
const OUTPUT_SECONDS = 3;

let fal: FalServer;
let replicate: ReplicateServer;
let cog: CogServer;
let dir: string;
let t: TestRefvid;
let tenant: Tenant;

beforeAll(async () => {
  [fal, replicate, cog] = await Promise.all([
    startFalServer({
      endpoints: [FAL_ENDPOINT],
      knobs: { queueMs: 20, latencyMs: 150, outputSeconds: OUTPUT_SECONDS },
    }),
    startReplicateServer({ knobs: { queueMs: 20, latencyMs: 150, outputSeconds: OUTPUT_SECONDS } }),
    startCogServer({
      knobs: { latencyMs: 150, outputSeconds: OUTPUT_SECONDS, outputAs: "url" },
      input: {
        properties: {
          prompt: { type: "string" },
          image_urls: { type: "array" },
          duration: { type: "integer" },
        },
        required: ["prompt"],
      },
    }),
  ]);
  dir = await mkdtemp(join(tmpdir(), "refvid-vendors-"));
  const file = join(dir, "providers.json");
  await writeFile(
    file,
    JSON.stringify({
      providers: {
        "fal-main": { type: "fal", url: fal.url, token_env: "FAL_KEY" },
        replicate: { type: "replicate", url: replicate.url, token_env: "REPLICATE_API_TOKEN" },
        "gpu-box-1": { type: "cog", url: cog.url },
        // Only probed for /readyz: a box that is down and a vendor that refuses the credential.
        "gpu-box-down": { type: "cog", url: "http://127.0.0.1:1" },
        "replicate-bad-key": { type: "replicate", url: replicate.url, token_env: "BAD_TOKEN" },
      },
      routes: {
        "lab-a/model-a/reference-to-video": [{ provider: "fal-main", model: FAL_ENDPOINT }],
        "lab-b/model-b/reference-to-video": [{ provider: "replicate", model: replicate.model }],
        // fal does not serve this endpoint: the job is refused, and the second route takes it.
        "lab-c/model-c/reference-to-video": [
          { provider: "fal-main", model: "fal-ai/not-deployed" },
          { provider: "replicate", model: replicate.model },
        ],
        // The box's model takes whole seconds and nothing it does not declare.
        "lab-d/model-d/reference-to-video": [
          { provider: "gpu-box-1", only: ["prompt", "image_urls", "duration"], as_number: ["duration"] },
        ],
      },
    }),
  );
  t = await startTestRefvid({
    REFVID_PROVIDERS_FILE: file,
    FAL_KEY: fal.token,
    REPLICATE_API_TOKEN: replicate.token,
    BAD_TOKEN: "r8_not_a_real_token",
    REFVID_UPSTREAM_POLL_MS: "25",
  });
  tenant = await t.tenant({ environment: "live", rateLimitPerMinute: 100_000, balanceUsd: "100.00" });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await Promise.all([fal?.close(), replicate?.close(), cog?.close()]);
  await rm(dir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
}, 60_000);

async function downloadedSeconds(url: string): Promise<number> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const file = join(dir, `${Math.random().toString(36).slice(2)}.mp4`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return probeDuration(file, { timeoutMs: 10_000 });
}

describe("a run on each vendor", () => {
  it.each([
    [
      "fal",
      "/v1/run/lab-a/model-a/reference-to-video",
      { prompt: "a", image_urls: [IMG], duration: "4" },
      "0.486",
    ],
    [
      "Replicate",
      "/v1/run/lab-b/model-b/reference-to-video",
      { prompt: "b", reference_image_urls: [IMG] },
      "0.168",
    ],
    [
      "Cog",
      "/v1/run/lab-d/model-d/reference-to-video",
      { prompt: "d", image_urls: [IMG], duration: "4s" },
      "0.213",
    ],
  ])(
    "%s: succeeds, is billed by the delivered length, and its file plays",
    async (_vendor, path, input, amount) => {
      const res = await tenant.call("POST", path, { input, sync: true });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ status: "succeeded", billing: { amount, currency: "usd" } });
      const url = res.body.output.videos[0].url as string;
      // Our own signed URL, never the vendor's.
      expect(new URL(url).pathname).toMatch(/^\/v1\/files\//);
      for (const vendor of [fal.url, replicate.url, cog.url]) expect(url.startsWith(vendor)).toBe(false);
      expect(Math.abs((await downloadedSeconds(url)) - OUTPUT_SECONDS)).toBeLessThan(0.2);
    },
  );

  it("sends exactly one job to each vendor per run, shaped by its route", () => {
    expect(fal.stats.submits).toBe(1);
    expect(cog.stats.submits).toBe(1);
    expect(replicate.stats.submits).toBe(1);
    expect(cog.stats.jobs[0]?.input).toEqual({ prompt: "d", image_urls: [IMG], duration: 4 });
  });
});

describe("when a vendor is in trouble", () => {
  it("falls back to the next route when the first vendor refuses the job", async () => {
    const before = { fal: fal.stats.submits, replicate: replicate.stats.submits };
    const res = await tenant.call("POST", "/v1/run/lab-c/model-c/reference-to-video", {
      input: { prompt: "c", reference_image_urls: [IMG] },
      sync: true,
    });
    expect(res.body).toMatchObject({ status: "succeeded", billing: { amount: "0.147" } });
    expect(fal.stats.submits).toBe(before.fal);
    expect(replicate.stats.submits).toBe(before.replicate + 1);
  });

  it("ends the run failed, uncharged, with the vendor's message, when the model fails", async () => {
    replicate.knobs.failNext = 1;
    replicate.knobs.failMessage = "NSFW content detected";
    const account = (await tenant.call("GET", "/v1/account")).body;
    const res = await tenant.call("POST", "/v1/run/lab-b/model-b/reference-to-video", {
      input: { prompt: "b", reference_image_urls: [IMG] },
      sync: true,
    });
    expect(res.body).toMatchObject({
      status: "failed",
      billing: { amount: "0.00" },
      error: { type: "provider_error" },
    });
    expect(res.body.error.message).toContain("NSFW content detected");
    expect(res.body.error.message).not.toContain(replicate.token);
    const after = (await tenant.call("GET", "/v1/account")).body;
    expect(after.wallet.balance_usd).toBe(account.wallet.balance_usd);
  });

  it("cancels the vendor's job when the run is cancelled", async () => {
    fal.knobs.latencyMs = 30_000;
    try {
      const res = await tenant.call("POST", "/v1/run/lab-a/model-a/reference-to-video", {
        input: { prompt: "long", image_urls: [IMG], duration: "4" },
      });
      expect(res.status).toBe(201);
      const runId = res.body.run_id as string;
      const job = await eventually(
        async () => [...fal.stats.jobs.values()].find((j) => j.status === "IN_PROGRESS"),
        10_000,
        "the vendor to start the job",
      );
      const cancelled = await tenant.call("POST", `/v1/runs/${runId}/cancel`);
      expect(cancelled.body).toMatchObject({ status: "cancelled", billing: { amount: "0.00" } });
      await eventually(
        async () => (job.cancelled ? true : undefined),
        10_000,
        "the vendor to hear the cancel",
      );
    } finally {
      fal.knobs.latencyMs = 150;
    }
  });
});

describe("test keys", () => {
  it("never reach a vendor: their runs go to the simulated provider, prompt directives and all", async () => {
    const sandbox = await t.tenant({ environment: "test", rateLimitPerMinute: 100_000 });
    const before = { fal: fal.stats.submits, replicate: replicate.stats.submits, cog: cog.stats.submits };
    const ok = await sandbox.call("POST", "/v1/run/lab-a/model-a/reference-to-video", {
      input: { prompt: "test key [simulate:delay=0]", image_urls: [IMG], duration: "4" },
      sync: true,
    });
    expect(ok.body).toMatchObject({ status: "succeeded" });
    const failed = await sandbox.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
      input: { prompt: "test key [simulate:fail]", image_urls: [IMG], duration: "4s" },
      sync: true,
    });
    expect(failed.body).toMatchObject({ status: "failed", error: { type: "provider_error" } });
    expect({ fal: fal.stats.submits, replicate: replicate.stats.submits, cog: cog.stats.submits }).toEqual(
      before,
    );
  });
});

describe("readiness", () => {
  it("reports each vendor's reachability without a vendor in trouble making the process unready", async () => {
    // Vendors are probed at start, then every 30 s: on a loaded machine the first probe of a
    // healthy vendor may time out, and the next one tells.
    const healthy = ["fal-main", "replicate", "gpu-box-1"];
    const ready = await eventually(
      async () => {
        const res = await fetch(`${t.url}/readyz`);
        const body = (await res.json()) as { providers?: Record<string, string> };
        const providers = body.providers ?? {};
        return Object.values(providers).includes("unknown") || healthy.some((p) => providers[p] !== "ok")
          ? undefined
          : { status: res.status, body };
      },
      75_000,
      "every vendor probed, the healthy ones reached",
    );
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({
      status: "ok",
      providers: {
        "fal-main": "ok",
        replicate: "ok",
        "gpu-box-1": "ok",
        "gpu-box-down": "unreachable",
        "replicate-bad-key": "unauthorized",
      },
    });
  }, 90_000);
});
