/**
 * Real refvid processes (the built `dist/main.js`) for tests that need more than one: several API
 * and worker processes on one Postgres database, killed and restarted at will.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@refvid/test-browser/ports";
import type pg from "pg";

export { freePort };

const MAIN = fileURLToPath(new URL("../dist/main.js", import.meta.url));

export interface RefvidProcess {
  role: "api" | "worker" | "all";
  port: number;
  url: string;
  child: ChildProcess;
  output: string[];
}

export interface Fleet {
  adminToken: string;
  start(role: RefvidProcess["role"], env?: Record<string, string>): Promise<RefvidProcess>;
  kill(process: RefvidProcess, signal?: NodeJS.Signals): Promise<void>;
  /** Calls the admin API of a running API process; fails on any status but 2xx. */
  admin(method: string, path: string, body?: unknown): Promise<any>;
  stopAll(): Promise<void>;
}

/**
 * Processes sharing one store (`DATABASE_URL`, or `REFVID_STORE=pglite:<dir>`), one signing
 * secret and one data directory; or, with `dataDirEach`, a data directory each, so that nothing on
 * disk is shared (files then live in a bucket, `REFVID_BLOB_STORE`).
 */
export async function fleet(
  baseEnv: Record<string, string>,
  options: { dataDirEach?: boolean } = {},
): Promise<Fleet> {
  const adminToken = randomBytes(24).toString("hex");
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-fleet-"));
  const running = new Set<RefvidProcess>();
  const shared = {
    REFVID_PROVIDER: "simulated",
    REFVID_ADMIN_TOKEN: adminToken,
    REFVID_SIGNING_SECRET: randomBytes(32).toString("hex"),
    REFVID_DATA_DIR: dataDir,
    REFVID_SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    HOST: "127.0.0.1",
    ...baseEnv,
  };

  const exited = (p: RefvidProcess) =>
    new Promise<void>((resolve) =>
      p.child.exitCode !== null || p.child.signalCode !== null
        ? resolve()
        : p.child.once("exit", () => resolve()),
    );

  return {
    adminToken,
    async start(role, env = {}) {
      const port = await freePort();
      const ownDir = options.dataDirEach ? { REFVID_DATA_DIR: await mkdtemp(join(dataDir, `${role}-`)) } : {};
      const child = spawn(process.execPath, [MAIN, "--role", role], {
        env: { PATH: process.env.PATH ?? "", ...shared, ...ownDir, PORT: String(port), ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const p: RefvidProcess = { role, port, url: `http://127.0.0.1:${port}`, child, output: [] };
      child.stdout?.on("data", (c: Buffer) => p.output.push(c.toString()));
      child.stderr?.on("data", (c: Buffer) => p.output.push(c.toString()));
      running.add(p);
      const deadline = Date.now() + 90_000; // a start on a loaded machine (migrations, PGlite) can take long
      for (;;) {
        if (child.exitCode !== null) throw new Error(`${role} process exited: ${p.output.join("")}`);
        const ok = await fetch(`${p.url}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) return p;
        if (Date.now() > deadline)
          throw new Error(`${role} process did not become ready: ${p.output.join("")}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    async admin(method, path, body) {
      const api = [...running].find((p) => p.role !== "worker" && p.child.exitCode === null);
      if (!api) throw new Error("no API process is running");
      const res = await fetch(`${api.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = (await res.json()) as any;
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
      return answer;
    },
    async kill(p, signal = "SIGKILL") {
      p.child.kill(signal);
      await exited(p);
      running.delete(p);
    },
    async stopAll() {
      await Promise.all(
        [...running].map(async (p) => {
          p.child.kill("SIGTERM");
          const forced = setTimeout(() => p.child.kill("SIGKILL"), 10_000);
          await exited(p);
          clearTimeout(forced);
        }),
      );
      running.clear();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The run once it ended, as Postgres holds it (status, charge, billed seconds, attempts, vendor job). */
export async function endedRun(db: pg.Pool, runId: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query(
      "select status, charged::bigint as charged, billable_seconds, attempts, upstream from runs where id = $1",
      [runId],
    );
    const run = rows[0];
    if (run && run.status !== "queued" && run.status !== "processing") return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} did not end within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * An organization's wallet and in-flight counts as Postgres holds them, with the sums that must
 * agree with them: charges over its runs, runs in flight, its keys' in-flight counters.
 */
export async function walletInSql(db: pg.Pool, organizationId: string) {
  const { rows } = await db.query(
    `select o.balance::bigint as balance, o.reserved::bigint as reserved, o.in_flight, o.lifetime_top_ups::bigint as top_ups,
       (select coalesce(sum(charged), 0)::bigint from runs where organization_id = o.id) as charged,
       (select count(*)::int from runs where organization_id = o.id and status in ('queued', 'processing')) as in_flight_runs,
       (select coalesce(sum(in_flight), 0)::int from api_keys where organization_id = o.id) as key_in_flight
     from organizations o where o.id = $1`,
    [organizationId],
  );
  const r = rows[0];
  return {
    balance: Number(r.balance),
    reserved: Number(r.reserved),
    inFlight: Number(r.in_flight),
    topUps: Number(r.top_ups),
    charged: Number(r.charged),
    inFlightRuns: Number(r.in_flight_runs),
    keyInFlight: Number(r.key_in_flight),
  };
}
