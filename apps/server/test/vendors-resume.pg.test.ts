/**
 * Model vendors behind several worker processes on one Postgres database. Exactly one vendor job
 * per run across a worker crash: a worker SIGKILLed while fal works on its run leaves the job
 * recorded on the run, and the worker that takes the run over resumes it. And a provider's
 * `max_concurrency` holds across workers, while runs for other providers go on.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DESTROY_TIMEOUT_MS, type TestDatabases, testDatabases } from "@refvid/store/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./harness.js";
import { sqlPool } from "./pg-fleet.js";
import { endedRun, type Fleet, fleet, type RefvidProcess } from "./processes.js";
import { type FalServer, startFalServer } from "./vendors/fal-server.js";

const ENDPOINT = "fal-ai/refvid-test/reference-to-video";

let databases: TestDatabases;
let db: pg.Pool;
let fal: FalServer;
let dir: string;
let processes: Fleet;

beforeAll(async () => {
  fal = await startFalServer({
    endpoints: [ENDPOINT],
    knobs: { queueMs: 50, latencyMs: 4_000, outputSeconds: 3 },
  });
  dir = await mkdtemp(join(tmpdir(), "refvid-resume-"));
  const file = join(dir, "providers.json");
  await writeFile(
    file,
    JSON.stringify({
      providers: { "fal-main": { type: "fal", url: fal.url, token_env: "FAL_KEY", max_concurrency: 1 } },
      routes: { "lab-a/model-a/reference-to-video": [{ provider: "fal-main", model: ENDPOINT }] },
    }),
  );
  databases = await testDatabases();
  const url = await databases.create();
  db = sqlPool(url);
  processes = await fleet({
    DATABASE_URL: url,
    REFVID_PROVIDERS_FILE: file,
    FAL_KEY: fal.token,
    REFVID_UPSTREAM_POLL_MS: "50",
    REFVID_WORKER_LEASE_MS: "1500",
  });
  await processes.start("api");
}, 60_000);

afterAll(async () => {
  await processes?.stopAll();
  await db?.end();
  await databases?.destroy();
  await fal?.close();
  await rm(dir, { recursive: true, force: true });
}, DESTROY_TIMEOUT_MS);

describe("a worker killed while a vendor works on its run", () => {
  it("is replaced by a worker that resumes the same vendor job: one submit, one billed video", async () => {
    const org = await processes.admin("POST", "/admin/v1/organizations", { name: "resume" });
    await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, {
      amount_usd: "10.00",
    });
    const key = await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
      environment: "live",
    });
    const first: RefvidProcess = await processes.start("worker");
    const api = await processes.start("api");
    const submitted = await fetch(`${api.url}/v1/run/lab-a/model-a/reference-to-video`, {
      method: "POST",
      headers: { authorization: `Key ${key.key}`, "content-type": "application/json" },
      body: JSON.stringify({
        input: { prompt: "resume me", image_urls: ["https://example.com/a.png"], duration: "4" },
      }),
    });
    expect(submitted.status).toBe(201);
    const runId = ((await submitted.json()) as { run_id: string }).run_id;

    // The vendor has the job and the run has it on record: now the worker dies.
    const recorded = await eventually(
      async () => {
        const { rows } = await db.query("select upstream from runs where id = $1", [runId]);
        return rows[0]?.upstream ?? undefined;
      },
      15_000,
      "the vendor job on the run",
    );
    expect(recorded).toMatchObject({ provider: "fal-main", id: expect.any(String) });
    expect(fal.stats.submits).toBe(1);
    await processes.kill(first, "SIGKILL");

    await processes.start("worker");
    const ended = await endedRun(db, runId);
    expect(ended).toMatchObject({ status: "succeeded", billable_seconds: 3, upstream: recorded });
    expect(Number(ended.charged)).toBe(3 * 162_000); // model-a 720p, billed by the delivered 3 s
    expect(ended.attempts).toBeGreaterThanOrEqual(2);
    expect(fal.stats.submits).toBe(1);
  }, 60_000);
});

describe("max_concurrency across worker processes", () => {
  it("keeps fal-main to one run at a time over two workers; runs waiting for it stay queued, others go on", async () => {
    await processes.start("worker"); // two workers from here on
    const api = await processes.start("api");
    const org = await processes.admin("POST", "/admin/v1/organizations", { name: "capped" });
    await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, {
      amount_usd: "10.00",
    });
    const key = await processes.admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
      environment: "live",
    });
    fal.knobs.latencyMs = 800;
    const submit = (path: string, input: unknown) =>
      fetch(`${api.url}${path}`, {
        method: "POST",
        headers: { authorization: `Key ${key.key}`, "content-type": "application/json" },
        body: JSON.stringify({ input }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { run_id: string } }));

    const samples: { processing: number; atVendor: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query(
          "select count(*)::int as n from runs where organization_id = $1 and status = 'processing' and provider = 'fal-main'",
          [org.organization_id],
        );
        const atVendor = [...fal.stats.jobs.values()].filter(
          (j) => j.status === "IN_QUEUE" || j.status === "IN_PROGRESS",
        ).length;
        samples.push({ processing: rows[0].n, atVendor });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const submitsBefore = fal.stats.submits;
    const capped: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await submit("/v1/run/lab-a/model-a/reference-to-video", {
        prompt: `capped ${i}`,
        image_urls: ["https://example.com/a.png"],
        duration: "4",
      });
      expect(res.status).toBe(201);
      capped.push(res.body.run_id);
    }
    // A run of a model on another provider does not wait behind them.
    const other = await submit("/v1/run/lab-d/model-d/reference-to-video", {
      prompt: "other provider [simulate:delay=50]",
      image_urls: ["https://example.com/a.png"],
      duration: "4s",
    });
    const statusOf = async (id: string) =>
      (await db.query("select status from runs where id = $1", [id])).rows[0]?.status as string;
    await eventually(
      async () => ((await statusOf(other.body.run_id)) === "succeeded" ? true : undefined),
      10_000,
      "the other model's run",
    );
    const cappedDone = await Promise.all(capped.map(statusOf));
    expect(cappedDone.filter((s) => s === "succeeded").length).toBeLessThan(3);

    await eventually(
      async () =>
        (await Promise.all(capped.map(statusOf))).every((s) => s === "succeeded") ? true : undefined,
      30_000,
      "every capped run to succeed",
    );
    sampling = false;
    await sampler;
    expect(samples.length).toBeGreaterThan(20);
    expect(Math.max(...samples.map((s) => s.processing))).toBe(1);
    expect(Math.max(...samples.map((s) => s.atVendor))).toBe(1);
    expect(fal.stats.submits - submitsBefore).toBe(3);
  }, 60_000);
});
