/**
 * refvid scaled out on one Postgres database and one S3 bucket, with no directory shared between
 * processes: two API processes and two worker processes. Caps hold across processes, sync submits
 * and webhooks work across them, a reference uploaded to one process is rendered by a worker and
 * served by the other, and a worker killed with SIGKILL loses no run and no cent.
 */
import { readFile } from "node:fs/promises";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { DESTROY_TIMEOUT_MS, type TestDatabases, testDatabases } from "@refvid/store/testing";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_POLL_MS } from "../src/worker/worker.js";
import { eventually, startReceiver } from "./harness.js";
import { sqlPool } from "./pg-fleet.js";
import { type Fleet, fleet, type RefvidProcess, walletInSql } from "./processes.js";
import { useS3Server } from "./s3.js";
import { stream } from "./sse.js";

const SUBMIT = "/v1/run/lab-d/model-d/reference-to-video";
const MODEL_A = "lab-a/model-a/reference-to-video";
const SCULPTURE = fileURLToPath(new URL("../../../docs/examples/refs/sculpture.png", import.meta.url));
const input = (prompt: string) => ({ prompt, image_urls: ["https://example.com/a.png"], duration: "4s" });

let databases: TestDatabases;
let db: pg.Pool;
let processes: Fleet;
let api: RefvidProcess[];
let workers: RefvidProcess[];
let publicUrl: Record<string, string>;

const s3 = useS3Server();

beforeAll(async () => {
  databases = await testDatabases();
  const url = await databases.create();
  db = sqlPool(url);
  processes = await fleet(
    {
      ...databases.env(url),
      REFVID_WORKER_LEASE_MS: "1500",
      REFVID_SIMULATED_LATENCY_MS: "200",
      REFVID_PROVIDER: `${MODEL_A}=preview`,
      ...s3.env,
    },
    { dataDirEach: true },
  );
  const first = await processes.start("api");
  // Behind one load balancer every process hands out the same public URL (in file URLs, webhooks
  // and upload URLs, which workers recognise as their own by it).
  publicUrl = { REFVID_PUBLIC_URL: `http://localhost:${first.port}` };
  api = [first, await processes.start("api", publicUrl)];
  workers = await Promise.all([processes.start("worker", publicUrl), processes.start("worker", publicUrl)]);
}, 120_000);

afterAll(async () => {
  await processes?.stopAll();
  await db?.end();
  await databases?.destroy();
}, DESTROY_TIMEOUT_MS);

const admin = (method: string, path: string, body?: unknown) => processes.admin(method, path, body);

/** A starter organization (cap 10) with `keys` keys capped at `keyCap` each. */
async function tenant(keys: number, keyCap: number) {
  const org = await admin("POST", "/admin/v1/organizations", { name: "fleet" });
  await admin("POST", `/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "300.00" });
  const made = [];
  for (let i = 0; i < keys; i++) {
    made.push(
      await admin("POST", `/admin/v1/organizations/${org.organization_id}/api-keys`, {
        max_concurrency: keyCap,
        rate_limit_per_minute: 10_000,
      }),
    );
  }
  return { organizationId: org.organization_id as string, keys: made.map((k) => k.key as string) };
}

const submit = (process: RefvidProcess, key: string, body: unknown) =>
  fetch(`${process.url}${SUBMIT}`, {
    method: "POST",
    headers: { authorization: `Key ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));

const wallet = (organizationId: string) => walletInSql(db, organizationId);

async function allEnded(organizationId: string, timeoutMs: number) {
  await eventually(
    async () => ((await wallet(organizationId)).inFlightRuns === 0 ? true : undefined),
    timeoutMs,
    "every run to end",
  );
}

describe("two API and two worker processes on one database", () => {
  it("never puts more than the caps in flight under 200 submits spread over both API processes", async () => {
    const t = await tenant(3, 5);
    const samples: { org: number; counter: number; keyMax: number }[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const { rows } = await db.query(
          `select (select count(*)::int from runs where organization_id = $1 and status in ('queued', 'processing')) as org,
             (select in_flight from organizations where id = $1) as counter,
             (select coalesce(max(c), 0)::int from (select count(*) as c from runs where organization_id = $1
                and status in ('queued', 'processing') group by api_key_id) k) as key_max`,
          [t.organizationId],
        );
        samples.push({ org: rows[0].org, counter: rows[0].counter, keyMax: rows[0].key_max });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();

    // 200 submits, 40 in the air at a time, round-robin over both API processes and three keys.
    const statuses: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 40 }, async () => {
        while (next < 200) {
          const i = next++;
          const res = await submit(api[i % 2] as RefvidProcess, t.keys[i % 3] as string, {
            input: input(`run ${i} [simulate:delay=150]`),
          });
          statuses.push(res.status);
          if (res.status === 429) expect(res.body.error.code).toBe("concurrency_limit_exceeded");
        }
      }),
    );
    await allEnded(t.organizationId, 60_000);
    sampling = false;
    await sampler;

    const admitted = statuses.filter((s) => s === 201).length;
    expect(statuses.filter((s) => s !== 201 && s !== 429)).toEqual([]);
    expect(admitted).toBeGreaterThanOrEqual(10); // the cap was reached
    expect(samples.length).toBeGreaterThan(20);
    expect(Math.max(...samples.map((s) => s.org))).toBeLessThanOrEqual(10);
    expect(Math.max(...samples.map((s) => s.counter))).toBeLessThanOrEqual(10);
    expect(Math.max(...samples.map((s) => s.keyMax))).toBeLessThanOrEqual(5);

    const w = await wallet(t.organizationId);
    const { rows } = await db.query("select count(*)::int as n from runs where organization_id = $1", [
      t.organizationId,
    ]);
    expect(rows[0].n).toBe(admitted); // a rejected submit leaves no run
    expect(w).toMatchObject({ reserved: 0, inFlight: 0, keyInFlight: 0 });
    expect(w.balance).toBe(w.topUps - w.charged);
  }, 120_000);

  it("renders a reference uploaded to one API process, and serves the video from the other", async () => {
    const t = await tenant(1, 2);
    const png = await readFile(SCULPTURE);
    const uploaded = await fetch(`${api[0]?.url}/v1/files`, {
      method: "POST",
      headers: { authorization: `Key ${t.keys[0]}`, "content-type": "image/png" },
      body: png,
    }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
    expect(uploaded.status).toBe(201);
    const res = await fetch(`${api[1]?.url}/v1/run/${MODEL_A}`, {
      method: "POST",
      headers: { authorization: `Key ${t.keys[0]}`, "content-type": "application/json" },
      body: JSON.stringify({
        input: { prompt: "bars", image_urls: [uploaded.body.url], duration: "4", resolution: "480p" },
        sync: true,
      }),
    });
    const run = (await res.json()) as any;
    expect(run.error).toBeNull();
    expect(run).toMatchObject({ status: "succeeded", billing: { billable_seconds: 4 } });
    for (const process of api) {
      const polled = await fetch(`${process.url}/v1/runs/${run.run_id}`, {
        headers: { authorization: `Key ${t.keys[0]}` },
      }).then((r) => r.json() as Promise<any>);
      const video = await fetch(polled.output.videos[0].url.replace(/^http:\/\/localhost:\d+/, process.url));
      expect(video.status).toBe(200);
      expect(
        Buffer.from(await video.arrayBuffer())
          .subarray(4, 8)
          .toString("latin1"),
      ).toBe("ftyp");
    }
  });

  it("stops a key revoked through one API process on the other within a second (keys are cached for 900 ms)", async () => {
    const t = await tenant(1, 2);
    const account = (process: RefvidProcess) =>
      fetch(`${process.url}/v1/account`, { headers: { authorization: `Key ${t.keys[0]}` } }).then(
        (r) => r.status,
      );
    // The other process has the key in its cache.
    expect(await account(api[1] as RefvidProcess)).toBe(200);
    const { api_key_id: keyId } = (await fetch(`${api[0]?.url}/v1/account`, {
      headers: { authorization: `Key ${t.keys[0]}` },
    }).then((r) => r.json())) as { api_key_id: string };
    const revoke = await fetch(`${api[0]?.url}/admin/v1/api-keys/${keyId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${processes.adminToken}` },
    });
    expect(revoke.status).toBe(200);
    const revoked = Date.now();
    // The process that revoked it forgets it at once.
    expect(await account(api[0] as RefvidProcess)).toBe(401);
    await eventually(
      async () => ((await account(api[1] as RefvidProcess)) === 401 ? true : undefined),
      5_000,
    );
    // 900 ms of cache, plus room for a busy machine's request latency.
    expect(Date.now() - revoked).toBeLessThan(1_500);
  });

  it("answers a sync submit on one process with the run a worker process finished", async () => {
    const t = await tenant(1, 5);
    const started = Date.now();
    const res = await submit(api[1] as RefvidProcess, t.keys[0] as string, {
      input: input("sync [simulate:delay=300]"),
      sync: true,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "succeeded", billing: { amount: "0.284" } });
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  it("streams a run's start, progress and end to an API process from a worker process", async () => {
    const t = await tenant(1, 5);
    const res = await submit(api[0] as RefvidProcess, t.keys[0] as string, {
      input: input("streamed [simulate:delay=1500]"),
    });
    const { events } = await stream((api[1] as RefvidProcess).url, t.keys[0] as string, res.body.run_id);
    const states = events.map((e) => e.data.status as string);
    expect(states.at(-1)).toBe("succeeded");
    expect(events.at(-1)?.event).toBe("done");
    // The worker process's progress reached the stream on the other API process.
    const progress = events.filter((e) => e.data.status === "processing" && e.data.progress > 0);
    expect(progress.length).toBeGreaterThan(1);
  }, 30_000);

  it("delivers each webhook exactly once with two dispatchers running", async () => {
    const HOOKS = 10;
    const t = await tenant(1, HOOKS);
    const receiver = await startReceiver();
    try {
      const ids: string[] = [];
      // As many as the organization's cap (10), so no submit waits for another run to end.
      for (let i = 0; i < HOOKS; i++) {
        const res = await submit(api[i % 2] as RefvidProcess, t.keys[0] as string, {
          input: input(`hook ${i} [simulate:delay=50]`),
          webhook_url: `${receiver.url}/hook`,
        });
        expect(res.status).toBe(201);
        ids.push(res.body.run_id as string);
      }
      await receiver.waitFor(HOOKS, 30_000);
      // Each event was recorded delivered at its first attempt. A delivered row is never claimed
      // again, and a claimed one is leased to its dispatcher, so no duplicate can still come.
      const deliveries = await eventually(
        async () => {
          const { rows } = await db.query(
            "select state, attempts from webhook_deliveries where run_id = any($1::text[])",
            [ids],
          );
          return rows.length === HOOKS && rows.every((r) => r.state === "delivered") ? rows : undefined;
        },
        10_000,
        "every delivery to be recorded",
      );
      expect(deliveries.map((r) => r.attempts)).toEqual(Array(HOOKS).fill(1));
      const webhookIds = receiver.requests.map((r) => r.headers["webhook-id"]);
      expect(webhookIds).toHaveLength(HOOKS);
      expect(new Set(webhookIds).size).toBe(HOOKS);
      expect(new Set(receiver.requests.map((r) => JSON.parse(r.body).data.run_id))).toEqual(new Set(ids));
    } finally {
      await receiver.close();
    }
  }, 60_000);

  it("loses no run and no cent when workers are killed with SIGKILL mid-run, again and again", async () => {
    const t = await tenant(2, 5);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await submit(api[i % 2] as RefvidProcess, t.keys[i % 2] as string, {
        input: input(`crash ${i} [simulate:delay=1500]`),
      });
      expect(res.status).toBe(201);
      ids.push(res.body.run_id);
    }
    for (let round = 0; round < 3; round++) {
      await eventually(
        async () => {
          const { rows } = await db.query(
            "select count(*)::int as n from runs where organization_id = $1 and status = 'processing'",
            [t.organizationId],
          );
          return rows[0].n > 0 ? true : undefined;
        },
        20_000,
        "a run in processing",
      );
      const victim = workers.shift() as RefvidProcess;
      await processes.kill(victim, "SIGKILL");
      workers.push(await processes.start("worker", publicUrl));
    }
    // Lease (1.5 s) + sweep (1 s) + a rerun, for each run: all end well within this.
    await allEnded(t.organizationId, 60_000);
    const { rows } = await db.query(
      "select status, charged::bigint as charged, attempts from runs where organization_id = $1",
      [t.organizationId],
    );
    expect(rows).toHaveLength(10);
    for (const r of rows) {
      expect(["succeeded", "failed"]).toContain(r.status);
      expect(Number(r.charged)).toBe(r.status === "succeeded" ? 284_000 : 0);
    }
    expect(rows.some((r) => r.attempts > 1)).toBe(true); // killed runs really were taken up again
    const w = await wallet(t.organizationId);
    expect(w).toMatchObject({ reserved: 0, inFlight: 0, keyInFlight: 0 });
    expect(w.balance).toBe(w.topUps - w.charged);
    // The slots are back.
    const again = await submit(api[0] as RefvidProcess, t.keys[0] as string, {
      input: input("after the crashes"),
    });
    expect(again.status).toBe(201);
  }, 120_000);

  it("answers a retried sync submit with its run's end after the API process that admitted it was SIGKILLed", async () => {
    const t = await tenant(1, 5);
    const body = JSON.stringify({
      input: input("sync, then the process dies [simulate:delay=800]"),
      sync: true,
    });
    const headers = {
      authorization: `Key ${t.keys[0]}`,
      "content-type": "application/json",
      "idempotency-key": `crash-${Date.now()}`,
    };
    const victim = api.shift() as RefvidProcess;
    // fetch resolves at the status line, which a sync submit sends right after admission.
    const first = await fetch(`${victim.url}${SUBMIT}`, { method: "POST", headers, body });
    expect(first.status).toBe(201);
    const runId = first.headers.get("x-run-id");
    await processes.kill(victim, "SIGKILL");
    await first.text().catch(() => undefined);
    api.push(await processes.start("api", publicUrl));

    // A retry on another process, while the run may still be processing, and again after it ended.
    for (const survivor of [api[0], api[1]] as RefvidProcess[]) {
      const retry = await fetch(`${survivor.url}${SUBMIT}`, { method: "POST", headers, body });
      expect(retry.status).toBe(201);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("x-run-id")).toBe(runId);
      expect(await retry.json()).toMatchObject({ run_id: runId, status: "succeeded" });
    }
    const { rows } = await db.query("select count(*)::int as n from runs where organization_id = $1", [
      t.organizationId,
    ]);
    expect(rows[0].n).toBe(1);
  }, 60_000);

  it("starts another organization's run while one organization's references trickle into every worker", async () => {
    // Each worker generates 4 runs at once and downloads for 8, 4 of them one organization's: A's
    // ten runs would once have taken all 8 generation slots of the two workers until they timed out.
    const sculpture = await readFile(SCULPTURE);
    const trickling = new Set<ServerResponse>();
    let cut = false;
    const files = createServer((req, res) => {
      if (cut) return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "image/png" });
      if (req.url === "/fast.png") return res.end(sculpture);
      // Ten times the default floor (32 KiB/s): slow, but never cut off.
      res.write(sculpture.subarray(0, 16));
      const timer = setInterval(() => res.write(Buffer.alloc(16 * 1024)), 50);
      trickling.add(res);
      res.on("close", () => {
        clearInterval(timer);
        trickling.delete(res);
      });
    });
    await new Promise<void>((resolve) => files.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    const run = (key: string, url: string) =>
      fetch(`${api[0]?.url}/v1/run/${MODEL_A}`, {
        method: "POST",
        headers: { authorization: `Key ${key}`, "content-type": "application/json" },
        body: JSON.stringify({
          input: { prompt: "p", image_urls: [url], duration: "4", resolution: "480p" },
        }),
      }).then(async (res) => (await res.json()) as any);
    try {
      const a = await tenant(1, 10);
      for (let i = 0; i < 10; i++)
        expect((await run(a.keys[0] as string, `${base}/slow/${i}.png`)).status).toBe("queued");
      await eventually(
        async () => (trickling.size >= 8 ? true : undefined),
        30_000,
        "A's downloads in both workers",
      );

      const b = await tenant(1, 1);
      const submitted = Date.now();
      const fast = await run(b.keys[0] as string, `${base}/fast.png`);
      await eventually(
        async () => {
          const { rows } = await db.query("select status from runs where id = $1", [fast.run_id]);
          return ["processing", "succeeded"].includes(rows[0]?.status) ? true : undefined;
        },
        10 * DEFAULT_POLL_MS,
        "B's run to start",
      );
      expect(Date.now() - submitted).toBeLessThan(10 * DEFAULT_POLL_MS);
      expect(trickling.size).toBeGreaterThan(0); // A's references are still coming in
      await allEnded(b.organizationId, 60_000);
      const { rows } = await db.query("select status from runs where id = $1", [fast.run_id]);
      expect(rows[0].status).toBe("succeeded");

      // A's downloads are cut (and its runs still queued find nothing): they fail, uncharged.
      cut = true;
      for (const res of trickling) res.destroy();
      await allEnded(a.organizationId, 60_000);
      expect(await wallet(a.organizationId)).toMatchObject({ charged: 0, reserved: 0, inFlight: 0 });
    } finally {
      files.closeAllConnections();
      await new Promise((resolve) => files.close(resolve));
    }
  }, 120_000);
});
