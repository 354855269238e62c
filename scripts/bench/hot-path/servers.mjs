// The servers the hot-path bench drives: the two baselines and refvid (the built dist/main.js) on
// memory and on Postgres, each in a process of its own, and the tenants it sets up through the
// admin API.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { testDatabases } from "@refvid/store/testing";

const MAIN = fileURLToPath(new URL("../../../apps/server/dist/main.js", import.meta.url));
/** Node flags for refvid's processes, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` or `--trace-gc`. */
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
const REQUEST_MS = /"ms":([0-9.]+)/;
const HERE = (file) => fileURLToPath(new URL(file, import.meta.url));

/** The submit every part drives, and its input (one reference image, 4 s). */
export const SUBMIT = "/v1/run/lab-d/model-d/reference-to-video";
export const submitInput = (prompt) => ({
  prompt,
  image_urls: ["https://example.com/a.png"],
  duration: "4s",
});

/** p50, p99, max and count of `values`. */
export function summary(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1), n: sorted.length };
}

export const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

export const rssOf = async (pid) => {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
};

/** Starts `args` with node and waits until `ready` answers; stdout is read (and dropped) as a log shipper would. */
async function startProcess(label, args, env, ready) {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    env: { PATH: process.env.PATH, PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  // requestMs: the time of each request refvid's own log line reports ("ms"), while `recording`.
  const state = { stderr: "", recording: false, requestMs: [], partial: "" };
  // BENCH_SERVER_LOG=/tmp/log keeps each server's output in /tmp/log.<label> (with --trace-gc, say).
  const tee = process.env.BENCH_SERVER_LOG
    ? createWriteStream(`${process.env.BENCH_SERVER_LOG}.${label.replace(/ /g, "-")}`)
    : null;
  child.stdout.on("data", (chunk) => {
    tee?.write(chunk);
    if (state.recording) {
      const lines = (state.partial + chunk.toString("latin1")).split("\n");
      state.partial = lines.pop() ?? "";
      for (const line of lines) {
        if (!line.includes('"msg":"request"')) continue;
        const ms = REQUEST_MS.exec(line);
        if (ms) state.requestMs.push(Number(ms[1]));
      }
    }
  });
  child.stderr.on("data", (chunk) => {
    state.stderr = (state.stderr + chunk).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited (${child.exitCode}): ${state.stderr}`);
    if (
      await fetch(`${url}${ready}`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (i > 600) throw new Error(`${label} did not start: ${state.stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    label,
    url,
    port,
    pid: child.pid,
    state,
    /** Starts keeping the request times the server logs; `stop` returns their p50 and p99. */
    recordRequestTimes() {
      Object.assign(state, { recording: true, requestMs: [], partial: "" });
      return () => {
        state.recording = false;
        return state.requestMs.length ? summary(state.requestMs) : null;
      };
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}

export const startRaw = () => startProcess("raw node:http", [HERE("./raw-server.mjs")], {}, "/");
export const startBaseline = () =>
  startProcess(
    "Express+validator",
    [HERE("./baseline-server.mjs")],
    {},
    "/v1/runs/run_00000000-0000-4000-8000-000000000000",
  );

/**
 * refvid on one store: `memory` (one process, role all, or api with `apiOnly`) or `postgres` (a
 * fresh database and an API process; `startWorker` adds a worker process). Logging stays at info;
 * runs go to the simulated provider.
 */
export async function startRefvid(store, env = {}, { apiOnly = false, nodeArgs = NODE_ARGS } = {}) {
  const adminToken = randomBytes(24).toString("hex");
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-bench-"));
  const common = {
    REFVID_ADMIN_TOKEN: adminToken,
    REFVID_SIGNING_SECRET: randomBytes(32).toString("hex"),
    REFVID_DATA_DIR: dataDir,
    REFVID_SEED_DEMO: "false",
    REFVID_PROVIDER: "simulated",
    REFVID_SIMULATED_LATENCY_MS: "0",
    REFVID_MAX_CONNECTIONS: "20000",
    // wrk and the 10,000 held submits come from one address, a few keys.
    REFVID_MAX_CONNECTIONS_PER_ADDRESS: "0",
    REFVID_MAX_REQUESTS_PER_KEY: "0",
    LOG_LEVEL: "info",
    NODE_ENV: "development",
    ...env,
  };
  let database = null;
  const processes = [];
  const stop = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (store === "memory") {
      const role = apiOnly ? "api" : "all";
      processes.push(
        await startProcess(
          "refvid memory",
          [...nodeArgs, MAIN, "--role", role],
          { ...common, REFVID_STORE: "memory" },
          "/readyz",
        ),
      );
    } else {
      database = await createDatabase();
      const withDb = { ...common, DATABASE_URL: database.url };
      processes.push(
        await startProcess("refvid postgres api", [...nodeArgs, MAIN, "--role", "api"], withDb, "/readyz"),
      );
    }
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  const api = processes[0];
  const refvid = {
    store,
    api,
    adminToken,
    database,
    processes,
    /** A worker process on the same database (Postgres only; memory's process runs its own). */
    async startWorker(extra = {}) {
      const worker = await startProcess(
        "refvid postgres worker",
        [...nodeArgs, MAIN, "--role", "worker"],
        { ...common, DATABASE_URL: database.url, REFVID_PUBLIC_URL: api.url, ...extra },
        "/readyz",
      );
      processes.push(worker);
      return worker;
    },
    admin: (path, body) =>
      fetch(`${api.url}/admin/v1${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (res) => {
        const json = await res.json();
        if (!res.ok) throw new Error(`admin ${path}: ${res.status} ${JSON.stringify(json)}`);
        return json;
      }),
    stop,
  };
  return refvid;
}

/** Organizations at the scale tier (100 runs in flight), one key each with no practical rate limit. */
export async function tenants(refvid, count) {
  const made = new Array(count);
  let next = 0;
  const one = async (i) => {
    const org = await refvid.admin("/organizations", { name: `bench ${i}` });
    await refvid.admin(`/organizations/${org.organization_id}/top-ups`, { amount_usd: "1000000.00" });
    const { key } = await refvid.admin(`/organizations/${org.organization_id}/api-keys`, {
      max_concurrency: 100,
      rate_limit_per_minute: 100_000,
    });
    made[i] = { organizationId: org.organization_id, key };
  };
  await Promise.all(
    Array.from({ length: Math.min(8, count) }, async () => {
      while (next < count) await one(next++);
    }),
  );
  return made;
}

/** A fresh migrated database on the test Postgres server (`@refvid/store/testing`); `drop` removes it and its template. */
async function createDatabase() {
  const databases = await testDatabases();
  try {
    return { url: await databases.create(), drop: () => databases.destroy() };
  } catch (err) {
    await databases.destroy().catch(() => {});
    throw err;
  }
}
