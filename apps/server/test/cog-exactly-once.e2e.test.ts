/**
 * Never two paid Cog predictions for one run. refvid in front of the Cog protocol server (coglet,
 * eight slots, the route's max_concurrency eight), vendor webhooks on, so predictions are async
 * (`Prefer: respond-async`) and their end comes by webhook: 200 runs, 40 of whose creates lose their
 * answer (20 dropped connections, 20 gateway 502s), at once, once the model runs, or at the
 * prediction's end; and some webhooks are lost on the way (Cog retries the end's). An async
 * prediction runs on whatever happens to its request: the adapter finds it (a probe of its id while
 * it is in flight, or its webhooks once it ended) and adopts it. The box starts exactly one
 * prediction per run, every run succeeds, the box is never asked for more than its slots, and the
 * wallet equation holds.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CogKnobs } from "./vendors/cog-server.js";
import { COG_MODEL_PATH, type CogStack, startCogStack } from "./vendors/cog-stack.js";

const IMG = "https://example.com/ref.png";
const SLOTS = 8;
const IN_FLIGHT = 16;
/** Top-ups that make the organization "growth": 25 runs at once, more than `IN_FLIGHT`. */
const BALANCE_USD = 350;
/** Per kind of loss (dropped, 502): when the answers are lost, how many, in a batch of how many runs. */
const BATCHES: { at: CogKnobs["loseAnswerAt"]; lost: number; runs: number }[] = [
  { at: "starting", lost: 8, runs: 40 },
  { at: "processing", lost: 6, runs: 30 },
  { at: "end", lost: 6, runs: 30 },
];
/** Webhook deliveries lost on the way, per batch: the end's is retried by Cog, a start's is gone. */
const WEBHOOKS_DROPPED = { start: 2, completed: 3 };

let stack: CogStack;

beforeAll(async () => {
  stack = await startCogStack({
    cog: {
      knobs: {
        slots: SLOTS,
        queueMs: 100,
        latencyMs: 200,
        outputSeconds: 2,
        // coglet keeps a cancelled prediction in flight until its worker acknowledges.
        cancelLatencyMs: 2_000,
      },
    },
    route: { only: ["prompt", "duration"], as_number: ["duration"] },
    maxConcurrency: SLOTS,
    env: { REFVID_VENDOR_WEBHOOKS: "on", REFVID_WORKER_CONCURRENCY: String(SLOTS) },
    tenant: { maxConcurrency: 100, balanceUsd: BALANCE_USD.toFixed(2) },
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  expect(stack.t.mismatches).toEqual([]);
}, 60_000);

interface Run {
  run_id: string;
  status: string;
  billing: { amount: string };
}

/** `count` sync runs, `IN_FLIGHT` at a time, each with a prompt of its own. */
async function runMany(first: number, count: number): Promise<Run[]> {
  const runs: Run[] = [];
  let next = first;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < first + count) {
        const input = { prompt: `cog run ${next++}`, image_urls: [IMG], duration: "4s" };
        const res = await stack.tenant.call("POST", COG_MODEL_PATH, { input, sync: true });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
        runs.push(res.body);
      }
    }),
  );
  return runs;
}

async function vendorLog(runId: string): Promise<{ kind: string; detail: string | null }[]> {
  const res = await stack.t.admin("GET", `/admin/v1/runs/${runId}/vendor-log`);
  expect(res.status).toBe(200);
  return res.body.data;
}

const count = <T>(items: T[], test: (item: T) => boolean) => items.filter(test).length;

it("200 runs, 40 lost answers, lost webhooks: exactly one prediction started per run, each lost one adopted", async () => {
  const runs: Run[] = [];
  for (const as of ["drop", "502"] as const) {
    for (const { at, lost, runs: size } of BATCHES) {
      Object.assign(stack.cog.knobs, {
        loseAnswerAs: as,
        loseAnswerAt: at,
        loseAnswerNext: lost,
        webhookDropNext: { ...WEBHOOKS_DROPPED },
      });
      runs.push(...(await runMany(runs.length, size)));
      expect(stack.cog.knobs.loseAnswerNext).toBe(0);
    }
  }
  expect(runs).toHaveLength(200);
  expect(runs.filter((run) => run.status !== "succeeded")).toEqual([]);

  const { jobs, webhooks } = stack.cog.stats;
  expect(count(jobs, (job) => job.answerLost)).toBe(40);
  // Lost at every point of a prediction's life, the model running or done when refvid heard.
  expect(count(jobs, (job) => job.answerLost && job.lostIn === "starting")).toBe(16);
  expect(count(jobs, (job) => job.answerLost && job.lostIn === "processing")).toBe(12);
  expect(count(jobs, (job) => job.answerLost && job.lostIn === "succeeded")).toBe(12);
  expect(count(webhooks, (call) => call.event === "completed" && call.attempt > 1)).toBeGreaterThan(0);
  // Exactly one prediction started (paid) per run; and the box was never asked for another, not
  // even one cancelled before its model ran.
  const started = (runId: string) => count(stack.cog.jobsFor(runId), (job) => job.paid);
  expect(runs.filter((run) => started(run.run_id) !== 1).map((run) => run.run_id)).toEqual([]);
  expect(jobs).toHaveLength(200);
  for (const run of runs) {
    const made = stack.cog.jobsFor(run.run_id);
    expect(made, run.run_id).toEqual([
      expect.objectContaining({ async: true, status: "succeeded", paid: true, cancelled: false }),
    ]);
    const log = await vendorLog(run.run_id);
    const logged = (kind: string) => count(log, (entry) => entry.kind === kind);
    const lost = made[0]?.answerLost ? 1 : 0;
    expect(logged("create_unanswered"), run.run_id).toBe(lost);
    expect(logged("adopted"), run.run_id).toBe(lost);
    expect(logged("created_again"), run.run_id).toBe(0);
    expect(logged("uncertain"), run.run_id).toBe(0);
    expect(logged("orphan"), run.run_id).toBe(0);
  }
  expect(stack.cog.stats.maxRunning).toBeLessThanOrEqual(SLOTS);
  expect(stack.cog.stats.conflicts).toBe(0);

  // The wallet equation: what the runs were charged left the balance, nothing stays reserved.
  const account = (await stack.tenant.call("GET", "/v1/account")).body;
  const charged = runs.reduce((sum, run) => sum + Math.round(Number(run.billing.amount) * 1e6), 0);
  expect(charged).toBeGreaterThan(0);
  expect(Math.round(Number(account.wallet.reserved_usd) * 1e6)).toBe(0);
  expect(Math.round(Number(account.wallet.balance_usd) * 1e6)).toBe(BALANCE_USD * 1e6 - charged);
}, 600_000);
