/**
 * The container image, as an operator runs it: built from the repository's Dockerfile by
 * `npm run test:deploy`, run read-only as its own user against the host's Postgres and a real
 * S3 server. `migrate` prepares the database and the bucket; an API container and worker
 * containers run a model to a real MP4; `/metrics` answers with its token; a worker killed
 * with SIGKILL mid-run loses neither the run nor a cent; a stopped worker exits cleanly; the
 * default role serves on the embedded store in its data volume.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type TestDatabases, testDatabases } from "@refvid/store/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../../src/media/ffmpeg.js";
import { eventually } from "../harness.js";
import { freePort, walletInSql } from "../processes.js";
import { containers, docker, imageUnderTest } from "./docker.js";

const MODEL = "lab-a/model-a/reference-to-video";
const SCULPTURE = fileURLToPath(new URL("../../../../docs/examples/refs/sculpture.png", import.meta.url));
const ADMIN_TOKEN = randomBytes(16).toString("hex");
const METRICS_TOKEN = randomBytes(16).toString("hex");
/** Not a loopback name, as production asks; the tests reach the containers on 127.0.0.1. */
const PUBLIC_HOST = "refvid.test";

interface S3Server {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

let image: string;
let databases: TestDatabases;
let databaseUrl: string;
let db: pg.Pool;
let s3: S3Server;
let bucket: string;
let work: string;
const box = containers();

beforeAll(async () => {
  image = imageUnderTest();
  databases = await testDatabases();
  databaseUrl = await databases.create();
  db = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const { startS3Server } = (await import(
    new URL("../../../../scripts/s3-server/start.mjs", import.meta.url).href
  )) as { startS3Server: () => Promise<S3Server> };
  s3 = await startS3Server();
  bucket = `refvid-${randomBytes(4).toString("hex")}`;
  work = await mkdtemp(join(tmpdir(), "refvid-deploy-"));
}, 180_000);

afterAll(async () => {
  await box.removeAll();
  await db?.end();
  await databases?.destroy();
  await s3?.stop();
  if (work) await rm(work, { recursive: true, force: true });
}, 120_000);

/** What every container of the fleet shares: production, the store, the bucket, the secrets. */
function fleetEnv(port: number): Record<string, string> {
  return {
    PORT: String(port),
    DATABASE_URL: databaseUrl,
    REFVID_BLOB_STORE: `s3://${bucket}/files`,
    REFVID_S3_ENDPOINT: s3.endpoint,
    AWS_REGION: s3.region,
    AWS_ACCESS_KEY_ID: s3.accessKeyId,
    AWS_SECRET_ACCESS_KEY: s3.secretAccessKey,
    REFVID_SIGNING_SECRET: "deploy-test-signing-secret-0123456789",
    REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
    REFVID_METRICS_TOKEN: METRICS_TOKEN,
    REFVID_PUBLIC_URL: `http://${PUBLIC_HOST}:${port}`,
    REFVID_PROVIDER: "simulated",
    // A killed worker's run comes back after this; the default (30 s) would only slow the test.
    REFVID_WORKER_LEASE_MS: "3000",
  };
}

async function ready(url: string, name: string) {
  await eventually(
    async () => {
      const state = await docker("inspect", "-f", "{{.State.Status}}", name);
      if (state !== "running") throw new Error(`${name} is ${state}: ${await box.logs(name)}`);
      return fetch(`${url}/readyz`).then(
        (r) => (r.ok ? true : undefined),
        () => undefined,
      );
    },
    90_000,
    `${name} to be ready`,
  );
}

async function call(base: string, method: string, path: string, auth: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

/** `refvid migrate` in a container of its own, as the compose stack runs it before the API. */
function migrate() {
  const env = Object.entries(fleetEnv(0)).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
  return docker("run", "--rm", "--network", "host", "--read-only", ...env, image, "migrate");
}

describe("the container image", () => {
  it("runs as an unprivileged user, with a health check on /healthz", async () => {
    const config = JSON.parse(await docker("image", "inspect", "-f", "{{json .Config}}", image));
    expect(config.User).toBe("node");
    expect(config.Healthcheck.Test.join(" ")).toContain("/healthz");
    expect(await docker("run", "--rm", "--network", "host", "--entrypoint", "id", image, "-u")).toBe("1000");
  });

  it("carries the CLI, runnable as `refvid`", async () => {
    const { version } = JSON.parse(
      await readFile(new URL("../../../cli/package.json", import.meta.url), "utf8"),
    );
    const out = await docker(
      "run",
      "--rm",
      "--network",
      "host",
      "--entrypoint",
      "refvid",
      image,
      "--version",
    );
    expect(out).toContain(version);
  });

  it("migrate applies the migrations and creates the bucket, once", async () => {
    const first = await migrate();
    expect(first).toContain("migrations applied (Postgres (DATABASE_URL))");
    expect(first).toContain(`bucket ${bucket} created`);
    expect(await migrate()).toContain(`bucket ${bucket} exists`);
    const { rows } = await db.query("select count(*)::int as n from refvid_migrations");
    expect(rows[0].n).toBeGreaterThan(10);
  });

  it("runs a model to a real MP4 on API and worker containers, and a worker killed mid-run loses nothing", async () => {
    await migrate();
    const [apiPort, workerPort, otherPort] = await Promise.all([freePort(), freePort(), freePort()]);
    const api = await box.start("api", image, fleetEnv(apiPort), ["--role", "api"]);
    const worker = await box.start("worker-a", image, fleetEnv(workerPort), ["--role", "worker"]);
    const base = `http://127.0.0.1:${apiPort}`;
    await ready(base, api);
    await ready(`http://127.0.0.1:${workerPort}`, worker);

    const admin = (method: string, path: string, body?: unknown) =>
      call(base, method, path, `Bearer ${ADMIN_TOKEN}`, body);
    const org = (await admin("POST", "/admin/v1/organizations", { name: "deploy" })).body;
    await admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "100.00" });
    // The test polls its runs faster than the default limit of 120 requests a minute allows.
    const { key } = (
      await admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
        rate_limit_per_minute: 10_000,
      })
    ).body;
    const auth = `Key ${key}`;

    // A reference uploaded to the API container, read by the worker container from the bucket.
    const uploaded = await fetch(`${base}/v1/files`, {
      method: "POST",
      headers: { authorization: auth, "content-type": "image/png" },
      body: await readFile(SCULPTURE),
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
    expect(uploaded.status).toBe(201);
    const input = (prompt: string) => ({
      prompt,
      image_urls: [uploaded.body.url],
      duration: "4",
      resolution: "480p",
    });

    const done = await call(base, "POST", `/v1/run/${MODEL}`, auth, {
      input: input("a slow dolly shot"),
      sync: true,
    });
    expect(done.body, JSON.stringify(done.body.error)).toMatchObject({ status: "succeeded" });
    const videoUrl = new URL(done.body.output.videos[0].url);
    expect(videoUrl.host).toBe(`${PUBLIC_HOST}:${apiPort}`);
    const video = await fetch(`${base}${videoUrl.pathname}${videoUrl.search}`);
    expect(video.status).toBe(200);
    const path = join(work, "out.mp4");
    await writeFile(path, Buffer.from(await video.arrayBuffer()));
    expect(await probeDuration(path, { timeoutMs: 20_000 })).toBeCloseTo(4, 0);

    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^refvid_runs_admitted_total(\{[^}]*\})? 1$/m);
    expect((await fetch(`${base}/metrics`)).status).toBe(401);

    // A long run, its worker killed while it generates; a second worker container finishes it.
    const slow = await call(base, "POST", `/v1/run/${MODEL}`, auth, {
      input: input("slow [simulate:delay=15000]"),
    });
    expect(slow.status).toBe(201);
    const runId = slow.body.run_id as string;
    await eventually(
      async () =>
        (await call(base, "GET", `/v1/runs/${runId}`, auth)).body.status === "processing" ? true : undefined,
      30_000,
      "the run to be processing",
    );
    await docker("kill", "-s", "KILL", worker);
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", worker)).toBe("137");
    const other = await box.start("worker-b", image, fleetEnv(otherPort), ["--role", "worker"]);
    await ready(`http://127.0.0.1:${otherPort}`, other);
    const ended = await eventually(
      async () => {
        const run = (await call(base, "GET", `/v1/runs/${runId}`, auth)).body;
        return run.status === "queued" || run.status === "processing" ? undefined : run;
      },
      90_000,
      "the run to end on the other worker",
    );
    expect(ended, JSON.stringify(ended.error)).toMatchObject({ status: "succeeded" });
    const { rows } = await db.query("select attempts from runs where id = $1", [runId]);
    expect(rows[0].attempts).toBe(2);
    const wallet = await walletInSql(db, org.organization_id);
    expect(wallet).toMatchObject({ reserved: 0, inFlight: 0, inFlightRuns: 0 });
    expect(wallet.charged).toBeGreaterThan(0);
    expect(wallet.balance).toBe(wallet.topUps - wallet.charged);

    // SIGTERM (docker stop) drains and exits 0.
    await docker("stop", "-t", "30", other);
    expect(await docker("inspect", "-f", "{{.State.ExitCode}}", other)).toBe("0");
  });

  it("serves API and worker in one process by default, on the embedded store in /data", async () => {
    const port = await freePort();
    const name = await box.start("all", image, {
      PORT: String(port),
      REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
      REFVID_METRICS_TOKEN: METRICS_TOKEN,
      REFVID_PUBLIC_URL: `http://${PUBLIC_HOST}:${port}`,
      REFVID_PROVIDER: "simulated",
    });
    const base = `http://127.0.0.1:${port}`;
    await ready(base, name);
    const admin = (method: string, path: string, body?: unknown) =>
      call(base, method, path, `Bearer ${ADMIN_TOKEN}`, body);
    const org = (await admin("POST", "/admin/v1/organizations", { name: "embedded" })).body;
    await admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "10.00" });
    const { key } = (await admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {})).body;
    const run = await call(base, "POST", `/v1/run/${MODEL}`, `Key ${key}`, {
      input: {
        prompt: "embedded",
        image_urls: ["https://example.com/a.png"],
        duration: "4",
        resolution: "480p",
      },
      sync: true,
    });
    expect(run.body, JSON.stringify(run.body.error)).toMatchObject({ status: "succeeded" });
    expect(await box.logs(name)).toContain("embedded PGlite in /data");
  });
});
