/**
 * A worker process killed with SIGKILL while its run's fal job runs: the run's time then runs out
 * in another worker process (which resumes the job, or sweeps the run), and the fal job is
 * cancelled at fal: the vendor protocol server sees the cancel. The run ends `timeout`, uncharged.
 * Real processes (the built dist/main.js) on one Postgres database.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestDatabases, testDatabases } from "@refvid/store/testing";
import { afterAll, beforeAll, expect, it } from "vitest";
import { eventually, rawRequest } from "./harness.js";
import { type Fleet, fleet } from "./processes.js";
import { type FalServer, startFalServer } from "./vendors/fal-server.js";

const FAL_ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const RUN_TIMEOUT_MS = 6_000;

let databases: TestDatabases;
let fal: FalServer;
let dir: string;
let processes: Fleet;

beforeAll(async () => {
  databases = await testDatabases();
  // A job that would run for ten minutes: far past the run's time.
  fal = await startFalServer({ endpoints: [FAL_ENDPOINT], knobs: { queueMs: 10, latencyMs: 600_000 } });
  dir = await mkdtemp(join(tmpdir(), "refvid-vendor-sigkill-"));
  const file = join(dir, "providers.json");
  await writeFile(
    file,
    JSON.stringify({
      providers: { "fal-main": { type: "fal", url: fal.url, token_env: "FAL_KEY" } },
      routes: { "lab-a/model-a/reference-to-video": [{ provider: "fal-main", model: FAL_ENDPOINT }] },
    }),
  );
  processes = await fleet({
    DATABASE_URL: await databases.create(),
    REFVID_PROVIDERS_FILE: file,
    FAL_KEY: fal.token,
    REFVID_ALLOW_LOCAL_URLS: "true",
    REFVID_UPSTREAM_POLL_MS: "50",
    REFVID_WORKER_LEASE_MS: "1500",
    REFVID_RUN_TIMEOUT_MS: String(RUN_TIMEOUT_MS),
  });
}, 120_000);

afterAll(async () => {
  await processes?.stopAll();
  await fal?.close();
  await databases?.destroy();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

it("cancels the vendor job of a run whose worker was SIGKILLed, when the run's time runs out", async () => {
  const api = await processes.start("api");
  const victim = await processes.start("worker");
  const org = await processes.admin("POST", "/admin/v1/organizations", { name: "sigkill" });
  await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, {
    amount_usd: "50.00",
  });
  const key = await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
    rate_limit_per_minute: 100_000,
  });
  const headers = { authorization: `Key ${key.key}` };
  const submitted = await rawRequest(api.url, "POST", "/v1/run/lab-a/model-a/reference-to-video", {
    headers,
    body: {
      input: { prompt: "outlives its worker", image_urls: ["https://example.com/a.png"], duration: "4" },
    },
  });
  expect(submitted.status).toBe(201);
  const runId = submitted.body.run_id as string;

  // The job is at fal and recorded on the run (the worker polls it only after recording it); then
  // the worker dies without a word.
  const job = await eventually(async () => [...fal.stats.jobs.values()][0], 30_000, "the fal job");
  await eventually(async () => (fal.stats.statusCalls > 0 ? true : undefined), 30_000, "the job followed");
  await eventually(
    async () => {
      const run = await rawRequest(api.url, "GET", `/v1/runs/${runId}`, { headers });
      return run.body.status === "processing" ? true : undefined;
    },
    30_000,
    "the run processing",
  );
  await processes.kill(victim, "SIGKILL");
  expect(fal.stats.cancels).toBe(0);

  // Another worker takes over; when the run's time is up, fal hears the cancel.
  await processes.start("worker");
  const ended = await eventually(
    async () => {
      const run = await rawRequest(api.url, "GET", `/v1/runs/${runId}`, { headers });
      return run.body.status === "timeout" ? run.body : undefined;
    },
    60_000,
    "the run timed out",
  );
  expect(ended.billing).toMatchObject({ amount: "0.00" });
  await eventually(async () => (fal.stats.cancels > 0 ? true : undefined), 30_000, "fal's cancel");
  expect(job.cancelled).toBe(true);
  expect(fal.stats.submits).toBe(1);
}, 180_000);
