/**
 * Never two paid vendor jobs for one run. refvid in front of the fal and Replicate protocol
 * servers, with vendor webhooks on and a status backstop of a minute (so runs end by webhook):
 * 200 runs per vendor, 40 of whose creates lose their answer (20 dropped connections, 20 gateway
 * 502s after the vendor took the job). Every run ends succeeded, the vendor counts exactly one paid
 * job per run, every lost create is adopted (the run's vendor log says so), the wallet equation
 * holds, and runs end soon after their webhook. Forged, stale and misdirected webhooks change
 * nothing.
 */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import {
  FAL_PATH,
  type FalAndReplicate,
  IMG,
  REPLICATE_PATH,
  runOfHook,
  startFalAndReplicate,
} from "./vendors/fal-replicate.js";

const RUNS = 200;
const LOST_PER_KIND = 20;
const IN_FLIGHT = 16;

let vendors: FalAndReplicate;
let t: TestRefvid;
let tenant: Tenant;

beforeAll(async () => {
  vendors = await startFalAndReplicate({ queueMs: 10, latencyMs: 80, outputSeconds: 2 });
  t = await startTestRefvid({
    ...vendors.env,
    REFVID_VENDOR_WEBHOOKS: "on",
    // Polling only as a backstop: runs that end in time ended by their webhook.
    REFVID_VENDOR_POLL_BACKSTOP_MS: "60000",
    REFVID_WORKER_CONCURRENCY: String(IN_FLIGHT),
  });
  tenant = await t.tenant({
    environment: "live",
    rateLimitPerMinute: 100_000,
    maxConcurrency: 100,
    balanceUsd: "7000.00",
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await vendors?.close();
  expect(t.mismatches).toEqual([]);
}, 60_000);

interface VendorLogEntry {
  at: string;
  route: string;
  upstream_id: string | null;
  kind: string;
  detail: string | null;
}

async function vendorLog(runId: string): Promise<VendorLogEntry[]> {
  const res = await t.admin("GET", `/admin/v1/runs/${runId}/vendor-log`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** `count` sync runs, `IN_FLIGHT` at a time, each with a prompt of its own. */
async function runMany(path: string, count: number, input: (i: number) => Record<string, unknown>) {
  const runs: { run_id: string; status: string; completed_at: string }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) {
        const i = next++;
        const res = await tenant.call("POST", path, { input: input(i), sync: true });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        runs.push(res.body);
      }
    }),
  );
  return runs;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function expectWalletEquation(): Promise<void> {
  const account = (await tenant.call("GET", "/v1/account")).body;
  const search = async () => {
    let charged = 0;
    let cursor: string | null = null;
    for (;;) {
      const page = await tenant.call("POST", "/v1/runs/search", {
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      for (const run of page.body.data) charged += Math.round(Number(run.billing?.amount ?? 0) * 1e6);
      if (!page.body.has_more) return charged;
      cursor = page.body.next_cursor;
    }
  };
  const spent = await search();
  expect(Math.round(Number(account.wallet.reserved_usd) * 1e6)).toBe(0);
  expect(Math.round(Number(account.wallet.balance_usd) * 1e6)).toBe(7000 * 1e6 - spent);
}

describe.each([
  {
    vendor: "fal",
    path: FAL_PATH,
    input: (i: number) => ({ prompt: `fal run ${i}`, image_urls: [IMG], duration: "4" }),
    knobs: () => vendors.fal.knobs,
    jobs: () =>
      [...vendors.fal.stats.jobs.values()].map((j) => ({
        run: runOfHook(j.webhookUrl),
        paid: j.paid,
        lost: j.answerLost,
      })),
    done: "OK",
  },
  {
    vendor: "Replicate",
    path: REPLICATE_PATH,
    input: (i: number) => ({ prompt: `replicate run ${i}`, reference_image_urls: [IMG] }),
    knobs: () => vendors.replicate.knobs,
    jobs: () =>
      [...vendors.replicate.stats.predictions.values()].map((p) => ({
        run: runOfHook(p.webhook),
        paid: p.paid,
        lost: p.answerLost,
      })),
    done: "succeeded",
  },
])("$vendor: 200 runs, 40 of whose creates lose their answer", ({ path, input, knobs, jobs, done }) => {
  it("ends every run once, with exactly one paid vendor job each, the lost ones adopted, soon after the webhook", async () => {
    knobs().loseAnswerAs = "drop";
    knobs().loseAnswerNext = LOST_PER_KIND;
    const first = await runMany(path, RUNS / 2, input);
    expect(knobs().loseAnswerNext).toBe(0);
    knobs().loseAnswerAs = "502";
    knobs().loseAnswerNext = LOST_PER_KIND;
    const second = await runMany(path, RUNS / 2, (i) => input(RUNS / 2 + i));
    expect(knobs().loseAnswerNext).toBe(0);
    const runs = [...first, ...second];

    expect(runs.filter((run) => run.status !== "succeeded")).toEqual([]);
    const byRun = new Map<string, { paid: number; lost: number; all: number }>();
    for (const job of jobs()) {
      const counts = byRun.get(job.run) ?? { paid: 0, lost: 0, all: 0 };
      counts.all++;
      if (job.paid) counts.paid++;
      if (job.lost) counts.lost++;
      byRun.set(job.run, counts);
    }
    for (const run of runs) {
      expect(byRun.get(run.run_id), run.run_id).toMatchObject({ paid: 1, all: 1 });
    }
    expect([...byRun.values()].reduce((sum, c) => sum + c.lost, 0)).toBe(2 * LOST_PER_KIND);

    const latencies: number[] = [];
    let adopted = 0;
    for (const run of runs) {
      const log = await vendorLog(run.run_id);
      if (log.some((e) => e.kind === "create_unanswered")) {
        expect(log.map((e) => e.kind)).toContain("adopted");
        expect(log.map((e) => e.kind)).not.toContain("created_again");
        adopted++;
      }
      const hook = log.filter((e) => e.kind === "hook" && e.detail === done).at(-1);
      expect(hook, `${run.run_id} ended without its webhook`).toBeDefined();
      latencies.push(Date.parse(run.completed_at) - Date.parse(hook?.at ?? ""));
    }
    expect(adopted).toBe(2 * LOST_PER_KIND);
    // Ended by the webhook, not the minute-long backstop (the bench reports the figure itself).
    expect(median(latencies)).toBeLessThan(5_000);
    await expectWalletEquation();
  }, 600_000);
});

describe("vendor webhooks that are not the vendor's", () => {
  it("refuses a wrong token, a bad signature and a stale one; a forged claim changes nothing", async () => {
    const res = await tenant.call("POST", REPLICATE_PATH, {
      input: { prompt: "forgery target", reference_image_urls: [IMG] },
      sync: true,
    });
    expect(res.body.status).toBe("succeeded");
    const runId = res.body.run_id as string;
    const prediction = [...vendors.replicate.stats.predictions.values()].find(
      (p) => runOfHook(p.webhook) === runId,
    );
    const hookUrl = prediction?.webhook as string;
    const before = await vendorLog(runId);
    const cancels = vendors.replicate.stats.cancels;
    const body = JSON.stringify({
      id: "forged-prediction",
      status: "succeeded",
      output: "https://evil.example/v.mp4",
    });
    const post = (url: string, headers: Record<string, string>) =>
      fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const signed = (secret: string, at = new Date()) => {
      const id = `msg_${Math.random().toString(36).slice(2)}`;
      return {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(secret).sign(id, at, body),
      };
    };

    // A token that is not the one refvid gave the vendor for this run.
    const wrongToken = hookUrl.replace(/[^/]+$/, "A".repeat(43));
    expect((await post(wrongToken, signed(vendors.replicate.webhookSecret))).status).toBe(404);
    // Signed with someone else's secret, or with the vendor's but ten minutes ago (a replay).
    const other = `whsec_${Buffer.from("not replicate's secret").toString("base64")}`;
    expect((await post(hookUrl, signed(other))).status).toBe(401);
    const stale = signed(vendors.replicate.webhookSecret, new Date(Date.now() - 600_000));
    expect((await post(hookUrl, stale)).status).toBe(401);
    expect(await vendorLog(runId)).toEqual(before);

    // Correctly signed (as only Replicate could), naming a prediction the ended run never had:
    // taken, logged as an orphan and cancelled at the vendor; the run itself is unchanged.
    expect((await post(hookUrl, signed(vendors.replicate.webhookSecret))).status).toBe(200);
    const after = await vendorLog(runId);
    expect(after.slice(before.length).map((e) => [e.kind, e.upstream_id])).toEqual([
      ["hook", "forged-prediction"],
      ["orphan", "forged-prediction"],
      ["cancelled", "forged-prediction"],
    ]);
    expect(vendors.replicate.stats.cancels).toBe(cancels + 1);
    const again = await tenant.call("GET", `/v1/runs/${runId}`);
    expect(again.body).toMatchObject({
      status: "succeeded",
      billing: res.body.billing,
      output: { videos: [{}] },
    });
  });

  it("refuses a fal webhook not signed by fal's published keys", async () => {
    const res = await tenant.call("POST", FAL_PATH, {
      input: { prompt: "fal forgery target", image_urls: [IMG], duration: "4" },
      sync: true,
    });
    const runId = res.body.run_id as string;
    const job = [...vendors.fal.stats.jobs.values()].find((j) => runOfHook(j.webhookUrl) === runId);
    const before = await vendorLog(runId);
    const body = JSON.stringify({ request_id: "forged", status: "OK", payload: {} });
    const answer = await fetch(job?.webhookUrl as string, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-fal-webhook-request-id": "forged",
        "x-fal-webhook-user-id": vendors.fal.userId,
        "x-fal-webhook-timestamp": String(Math.floor(Date.now() / 1000)),
        "x-fal-webhook-signature": "ab".repeat(64),
      },
      body,
    });
    expect(answer.status).toBe(401);
    expect(await vendorLog(runId)).toEqual(before);
  });
});
