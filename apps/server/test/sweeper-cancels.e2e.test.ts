/**
 * A run whose worker died with a vendor job in flight: when its time runs out, the sweeper ends it
 * and cancels the job it recorded, so the vendor does not run (and bill) it to its end. The worker
 * here is the real fal adapter, stopped as a dying worker leaves it (`LeaveUpstreamRunning`); the
 * server runs the API only, and the test sweeps.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { LeaveUpstreamRunning, type UpstreamJob } from "../src/providers/types.js";
import { Sweeper } from "../src/worker/sweeper.js";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { type FalServer, startFalServer } from "./vendors/fal-server.js";

const A = "lab-a/model-a/reference-to-video";
const FAL_ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const TIMEOUT_MS = 1_000;

let fal: FalServer;
let dir: string;
let t: TestRefvid;
let tenant: Tenant;

beforeAll(async () => {
  // A job that would run for a minute: long past the run's time.
  fal = await startFalServer({ endpoints: [FAL_ENDPOINT], knobs: { queueMs: 10, latencyMs: 60_000 } });
  dir = await mkdtemp(join(tmpdir(), "refvid-sweeper-"));
  const file = join(dir, "providers.json");
  await writeFile(
    file,
    JSON.stringify({
      providers: { fal: { type: "fal", url: fal.url, token_env: "FAL_KEY" } },
      routes: { [A]: [{ provider: "fal", model: FAL_ENDPOINT }] },
    }),
  );
  t = await startTestRefvid({
    REFVID_ROLE: "api",
    REFVID_PROVIDERS_FILE: file,
    FAL_KEY: fal.token,
    REFVID_RUN_TIMEOUT_MS: String(TIMEOUT_MS),
    REFVID_UPSTREAM_POLL_MS: "25",
  });
  tenant = await t.tenant({ environment: "live", balanceUsd: "100.00" });
}, 60_000);

afterAll(async () => {
  await t?.close();
  await fal?.close();
  await rm(dir, { recursive: true, force: true });
  expect(t.mismatches).toEqual([]);
});

it("cancels the vendor job of a run whose worker died, once its time runs out", async () => {
  const submitted = await tenant.call("POST", `/v1/run/${A}`, {
    input: { prompt: "p", image_urls: ["https://example.com/a.png"], duration: "4" },
  });
  expect(submitted.status).toBe(201);
  const runId: string = submitted.body.run_id;
  const { deps } = t.refvid;

  // A worker takes the run, submits it to fal, records the job, and dies.
  const workerId = "worker-that-dies";
  const [claimed] = await deps.store.claimRuns({ workerId, limit: 1, leaseMs: 600_000, now: new Date() });
  expect(claimed?.id).toBe(runId);
  const route = deps.catalog.current.get(A).routes[0];
  const dies = new AbortController();
  let recorded: UpstreamJob | undefined;
  const running = route?.provider.run(
    {
      runId,
      request: deps.catalog.current.get(A).model.normalize(claimed?.input),
      input: claimed?.input ?? {},
      workDir: dir,
      references: [],
      maxDurationSeconds: 30,
    },
    {
      signal: dies.signal,
      onProgress: () => {},
      recordUpstream: async (job) => {
        recorded = job;
        expect(await deps.store.recordUpstream({ runId, workerId, upstream: job })).toBe(true);
        dies.abort(new LeaveUpstreamRunning("the worker died"));
      },
    },
  );
  await expect(running).rejects.toBeInstanceOf(LeaveUpstreamRunning);
  expect(recorded).toBeDefined();
  expect(fal.stats.submits).toBe(1);
  expect(fal.stats.cancels).toBe(0);

  // Its time runs out: the sweeper ends it, and the job it recorded is cancelled.
  await eventually(async () =>
    Date.now() - Date.parse(submitted.body.created_at) > TIMEOUT_MS ? true : undefined,
  );
  await new Sweeper(deps).sweep();
  const ended = await tenant.call("GET", `/v1/runs/${runId}`);
  expect(ended.body).toMatchObject({ status: "timeout", billing: { amount: "0.00" } });
  expect(fal.stats.cancels).toBe(1);
  const job = fal.stats.jobs.get(recorded?.id ?? "");
  expect(job?.status).toBe("COMPLETED");
  const account = await tenant.call("GET", "/v1/account");
  expect(account.body.wallet).toMatchObject({ balance_usd: "100.00", reserved_usd: "0.00" });
});
