/**
 * The harder paths of "one paid vendor job per run": a fal job whose webhook comes only after
 * refvid gave up waiting (it becomes the run's, and the job made meanwhile is cancelled before it
 * started); two Replicate runs with the same input whose creates both lost their answer (each
 * adopts its own, from the list or by the prediction's start webhook); and fal without webhooks, where
 * refvid cannot know and says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import {
  FAL_PATH,
  type FalAndReplicate,
  IMG,
  REPLICATE_PATH,
  runOfHook,
  startFalAndReplicate,
} from "./vendors/fal-replicate.js";

let vendors: FalAndReplicate;
/** Vendor webhooks on, a short wait for a lost create's webhook. */
let hooked: { t: TestRefvid; tenant: Tenant };
/** Vendor webhooks off. */
let blind: { t: TestRefvid; tenant: Tenant };

async function refvid(env: Record<string, string>) {
  const t = await startTestRefvid({
    ...vendors.env,
    REFVID_UPSTREAM_POLL_MS: "25",
    REFVID_VENDOR_POLL_BACKSTOP_MS: "60000",
    ...env,
  });
  const tenant = await t.tenant({ environment: "live", rateLimitPerMinute: 100_000, balanceUsd: "100.00" });
  return { t, tenant };
}

beforeAll(async () => {
  vendors = await startFalAndReplicate({ queueMs: 10, latencyMs: 200, outputSeconds: 2 });
  hooked = await refvid({ REFVID_VENDOR_WEBHOOKS: "on", REFVID_VENDOR_ADOPT_WINDOW_MS: "500" });
  blind = await refvid({ REFVID_VENDOR_WEBHOOKS: "off" });
}, 60_000);

afterAll(async () => {
  await hooked?.t.close();
  await blind?.t.close();
  await vendors?.close();
  expect(hooked.t.mismatches).toEqual([]);
  expect(blind.t.mismatches).toEqual([]);
}, 60_000);

async function kindsOf(t: TestRefvid, runId: string): Promise<string[]> {
  const res = await t.admin("GET", `/admin/v1/runs/${runId}/vendor-log`);
  return (res.body.data as { kind: string }[]).map((entry) => entry.kind);
}

describe("fal", () => {
  it("adopts a lost create's job when its webhook comes late, cancelling the job made meanwhile before it starts", async () => {
    const falJobs = () => [...vendors.fal.stats.jobs.values()];
    const before = falJobs().length;
    vendors.fal.knobs.loseAnswerNext = 1;
    vendors.fal.knobs.webhookDelayMs = 2_000; // past the 500 ms refvid waits for it
    // Once the first job is made, the next one waits in fal's queue for a minute.
    const slowQueue = eventually(async () => (falJobs().length > before ? true : undefined), 30_000).then(
      () => {
        vendors.fal.knobs.queueMs = 60_000;
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
      vendors.fal.knobs.queueMs = 10;
      vendors.fal.knobs.webhookDelayMs = 0;
    }
  });

  it("without webhooks, cannot find a lost create's job: creates again and says so", async () => {
    const before = vendors.fal.stats.submits;
    vendors.fal.knobs.loseAnswerNext = 1;
    const res = await blind.tenant.call("POST", FAL_PATH, {
      input: { prompt: "nobody calls back", image_urls: [IMG], duration: "4" },
      sync: true,
    });
    expect(res.body.status).toBe("succeeded");
    expect(vendors.fal.stats.submits).toBe(before + 2);
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
    const predictions = () => [...vendors.replicate.stats.predictions.values()];
    vendors.replicate.knobs.loseAnswerNext = 2;
    const input = { prompt: "twins", reference_image_urls: [IMG] };
    const [a, b] = await Promise.all(
      [0, 1].map(() => hooked.tenant.call("POST", REPLICATE_PATH, { input, sync: true })),
    );
    expect(vendors.replicate.knobs.loseAnswerNext).toBe(0);
    for (const res of [a, b]) {
      expect(res?.body.status).toBe("succeeded");
      const mine = predictions().filter((p) => runOfHook(p.webhook) === res?.body.run_id);
      expect(mine).toHaveLength(1);
      expect(mine[0]).toMatchObject({ paid: true, answerLost: true });
      expect(await kindsOf(hooked.t, res?.body.run_id)).toContain("adopted");
    }
  });
});
