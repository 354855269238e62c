/**
 * The harder paths of "one paid vendor job per run": a fal job whose webhook comes only after
 * refvid gave up waiting (it becomes the run's, and the job made meanwhile is cancelled before it
 * started); two Replicate runs with the same input whose creates both lost their answer (each
 * adopts its own, from the list or by the prediction's start webhook); and fal without webhooks, where
 * refvid cannot know and says so.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { type FalServer, startFalServer } from "./vendors/fal-server.js";
import { type ReplicateServer, startReplicateServer } from "./vendors/replicate-server.js";

const FAL_ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const IMG = "https://example.com/ref.png";
const FAL_PATH = "/v1/run/lab-a/model-a/reference-to-video";
const REPLICATE_PATH = "/v1/run/lab-b/model-b/reference-to-video";

let fal: FalServer;
let replicate: ReplicateServer;
let dir: string;
/** Vendor webhooks on, a short wait for a lost create's webhook. */
let hooked: { t: TestRefvid; tenant: Tenant };
/** Vendor webhooks off. */
let blind: { t: TestRefvid; tenant: Tenant };

async function refvid(env: Record<string, string>) {
  const t = await startTestRefvid({
    REFVID_PROVIDERS_FILE: join(dir, "providers.json"),
    FAL_KEY: fal.token,
    REPLICATE_API_TOKEN: replicate.token,
    REFVID_FAL_JWKS_URL: fal.jwksUrl,
    REFVID_UPSTREAM_POLL_MS: "25",
    REFVID_VENDOR_POLL_BACKSTOP_MS: "60000",
    ...env,
  });
  const tenant = await t.tenant({ environment: "live", rateLimitPerMinute: 100_000, balanceUsd: "100.00" });
  return { t, tenant };
}

beforeAll(async () => {
  [fal, replicate] = await Promise.all([
    startFalServer({ endpoints: [FAL_ENDPOINT], knobs: { queueMs: 10, latencyMs: 200, outputSeconds: 2 } }),
    startReplicateServer({ knobs: { queueMs: 10, latencyMs: 200, outputSeconds: 2 } }),
  ]);
  dir = await mkdtemp(join(tmpdir(), "refvid-orphans-"));
  await writeFile(
    join(dir, "providers.json"),
    JSON.stringify({
      providers: {
        "fal-main": { type: "fal", url: fal.url, token_env: "FAL_KEY" },
        replicate: { type: "replicate", url: replicate.url, token_env: "REPLICATE_API_TOKEN" },
      },
      routes: {
        "lab-a/model-a/reference-to-video": [{ provider: "fal-main", model: FAL_ENDPOINT }],
        "lab-b/model-b/reference-to-video": [{ provider: "replicate", model: replicate.model }],
      },
    }),
  );
  hooked = await refvid({ REFVID_VENDOR_WEBHOOKS: "on", REFVID_VENDOR_ADOPT_WINDOW_MS: "500" });
  blind = await refvid({ REFVID_VENDOR_WEBHOOKS: "off", REFVID_UPSTREAM_POLL_MS: "25" });
}, 60_000);

afterAll(async () => {
  await hooked?.t.close();
  await blind?.t.close();
  await Promise.all([fal?.close(), replicate?.close()]);
  await rm(dir, { recursive: true, force: true });
  expect(hooked.t.mismatches).toEqual([]);
  expect(blind.t.mismatches).toEqual([]);
}, 60_000);

const runOfHook = (url: string | null) => (url ? decodeURIComponent(url.split("/").at(-2) ?? "") : "");

async function kindsOf(t: TestRefvid, runId: string): Promise<string[]> {
  const res = await t.admin("GET", `/admin/v1/runs/${runId}/vendor-log`);
  return (res.body.data as { kind: string }[]).map((entry) => entry.kind);
}

describe("fal", () => {
  it("adopts a lost create's job when its webhook comes late, cancelling the job made meanwhile before it starts", async () => {
    const falJobs = () => [...fal.stats.jobs.values()];
    const before = falJobs().length;
    fal.knobs.loseAnswerNext = 1;
    fal.knobs.webhookDelayMs = 2_000; // past the 500 ms refvid waits for it
    // Once the first job is made, the next one waits in fal's queue for a minute.
    const slowQueue = eventually(async () => (falJobs().length > before ? true : undefined), 30_000).then(
      () => {
        fal.knobs.queueMs = 60_000;
      },
    );
    try {
      const res = await hooked.tenant.call("POST", FAL_PATH, {
        input: { prompt: "late webhook", image_urls: [IMG], duration: "4" },
        sync: true,
      });
      await slowQueue;
      expect(res.body.status).toBe("succeeded");
      const mine = falJobs().filter((job) => runOfHook(job.webhookUrl) === res.body.run_id);
      expect(mine).toHaveLength(2);
      expect(mine.filter((job) => job.paid)).toHaveLength(1);
      expect(mine.find((job) => job.answerLost)?.paid).toBe(true);
      expect(mine.find((job) => !job.answerLost)).toMatchObject({ cancelled: true, cancelledIn: "IN_QUEUE" });
      // Then the adopted job's own status and result are read; nothing more is logged but hooks.
      expect((await kindsOf(hooked.t, res.body.run_id)).slice(0, 6)).toEqual([
        "create_unanswered",
        "created_again",
        "hook",
        "orphan",
        "cancelled",
        "adopted",
      ]);
    } finally {
      fal.knobs.queueMs = 10;
      fal.knobs.webhookDelayMs = 0;
    }
  });

  it("without webhooks, cannot find a lost create's job: creates again and says so", async () => {
    const before = fal.stats.submits;
    fal.knobs.loseAnswerNext = 1;
    const res = await blind.tenant.call("POST", FAL_PATH, {
      input: { prompt: "nobody calls back", image_urls: [IMG], duration: "4" },
      sync: true,
    });
    expect(res.body.status).toBe("succeeded");
    expect(fal.stats.submits).toBe(before + 2);
    expect(await kindsOf(blind.t, res.body.run_id)).toEqual([
      "create_unanswered",
      "uncertain",
      "created_again",
    ]);
  });
});

describe("Replicate", () => {
  // Whether a run finds one candidate in the list (the other's create came later, or was already
  // adopted) or two (then the start webhook, whose URL names the run, tells which), it adopts its own.
  it("gives each of two look-alike lost creates its own prediction", async () => {
    const predictions = () => [...replicate.stats.predictions.values()];
    replicate.knobs.loseAnswerNext = 2;
    const input = { prompt: "twins", reference_image_urls: [IMG] };
    const [a, b] = await Promise.all(
      [0, 1].map(() => hooked.tenant.call("POST", REPLICATE_PATH, { input, sync: true })),
    );
    expect(replicate.knobs.loseAnswerNext).toBe(0);
    for (const res of [a, b]) {
      expect(res?.body.status).toBe("succeeded");
      const mine = predictions().filter((p) => runOfHook(p.webhook) === res?.body.run_id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ paid: true, answerLost: true });
      expect(await kindsOf(hooked.t, res?.body.run_id)).toContain("adopted");
    }
  });
});
