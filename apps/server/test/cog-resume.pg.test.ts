/**
 * A worker SIGKILLed while its run's async Cog prediction runs: the worker that takes the run over
 * never makes a second prediction. While the prediction still runs, it follows it (probes, then
 * its webhook). When it ended while no worker was alive, its webhook, taken by the API process and
 * kept with the run's vendor log, has its end: the new worker reads it and sends the box nothing.
 * Real processes (the built dist/main.js) on one Postgres database, vendor webhooks on and
 * addressed to the API process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type TestDatabases, testDatabases } from "@refvid/store/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./harness.js";
import { sqlPool } from "./pg-fleet.js";
import { endedRun, type Fleet, fleet, type RefvidProcess } from "./processes.js";
import { type CogServer, startCogServer } from "./vendors/cog-server.js";
import { writeCogRoutes } from "./vendors/cog-stack.js";

const PATH = "/v1/run/lab-d/model-d/reference-to-video";

let databases: TestDatabases;
let db: pg.Pool;
let cog: CogServer;
let dir: string;
let processes: Fleet;
let api: RefvidProcess;
let key: string;

beforeAll(async () => {
  // The model runs until the test ends it (`finishNow`).
  cog = await startCogServer({ knobs: { latencyMs: 600_000, outputSeconds: 2 } });
  dir = await mkdtemp(join(tmpdir(), "refvid-cog-resume-"));
  const file = await writeCogRoutes(dir, cog.url);

  databases = await testDatabases();
  const url = await databases.create();
  db = sqlPool(url);
  processes = await fleet({
    DATABASE_URL: url,
    REFVID_PROVIDERS_FILE: file,
    REFVID_VENDOR_WEBHOOKS: "on",
    REFVID_UPSTREAM_POLL_MS: "50",
    REFVID_WORKER_LEASE_MS: "1500",
  });
  api = await processes.start("api");
  const org = await processes.admin("POST", "/admin/v1/organizations", { name: "cog-resume" });
  await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, {
    amount_usd: "10.00",
  });
  key = (
    await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
      environment: "live",
    })
  ).key;
}, 120_000);

afterAll(async () => {
  await processes?.stopAll();
  await db?.end();
  await databases?.destroy();
  await cog?.close();
  await rm(dir, { recursive: true, force: true });
}, 60_000);

/** A worker whose predictions' webhooks go to the API process. */
const worker = () => processes.start("worker", { REFVID_PUBLIC_URL: api.url });

async function submit(prompt: string): Promise<string> {
  const res = await fetch(`${api.url}${PATH}`, {
    method: "POST",
    headers: { authorization: `Key ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: { prompt, image_urls: ["https://example.com/a.png"], duration: "4s" } }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { run_id: string }).run_id;
}

/** Waits until the run's prediction runs on the box and is on the run. */
async function runningAndRecorded(runId: string): Promise<void> {
  await eventually(
    async () => {
      const { rows } = await db.query("select upstream from runs where id = $1", [runId]);
      const processing = cog.jobsFor(runId)[0]?.status === "processing";
      return processing && rows[0]?.upstream ? true : undefined;
    },
    30_000,
    "the prediction running and on the run",
  );
}

/** PUTs to the box carrying a model's input (probes carry `input: []`) for `runId`. */
const creates = (runId: string) =>
  cog.stats.requests.filter(
    (r) =>
      r.method === "PUT" &&
      r.path === `/predictions/${runId}` &&
      !Array.isArray((r.body as { input?: unknown } | null)?.input),
  );

describe("a worker SIGKILLed while the box runs its run's async prediction", () => {
  it("is replaced by a worker that follows the same prediction: one prediction, one billed video", async () => {
    const first = await worker();
    const runId = await submit("resume me");
    await runningAndRecorded(runId);
    await processes.kill(first, "SIGKILL");

    const probesBefore = cog.stats.statusCalls;
    const second = await worker();
    // The new worker probes the prediction it took over; only then does the model finish.
    await eventually(
      async () => (cog.stats.statusCalls > probesBefore ? true : undefined),
      30_000,
      "a probe",
    );
    cog.finishNow(runId);
    expect(await endedRun(db, runId)).toMatchObject({ status: "succeeded", billable_seconds: 2 });
    expect(cog.jobsFor(runId)).toMatchObject([{ async: true, status: "succeeded", cancelled: false }]);
    expect(creates(runId)).toHaveLength(1);
    await processes.kill(second, "SIGKILL");
  }, 90_000);

  it("when it ended while no worker was alive, its kept webhook has its end: nothing sent to the box", async () => {
    const first = await worker();
    const runId = await submit("ended unheard");
    await runningAndRecorded(runId);
    await processes.kill(first, "SIGKILL");

    cog.finishNow(runId);
    // The API process took the end's webhook and kept its body.
    await eventually(
      async () => {
        const { rows } = await db.query(
          "select 1 from vendor_events where run_id = $1 and kind = 'hook' and detail = 'succeeded' and payload is not null",
          [runId],
        );
        return rows.length > 0 ? true : undefined;
      },
      30_000,
      "the kept webhook",
    );
    const requestsBefore = cog.stats.requests.length;
    await worker();
    expect(await endedRun(db, runId)).toMatchObject({ status: "succeeded", billable_seconds: 2 });
    expect(cog.stats.requests.slice(requestsBefore).filter((r) => r.path.includes(runId))).toEqual([]);
    expect(cog.jobsFor(runId)).toHaveLength(1);
  }, 90_000);
});
