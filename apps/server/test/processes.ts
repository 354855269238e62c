/**
 * Real refvid processes (the built `dist/main.js`) for tests that need more than one: several API
 * and worker processes on one Postgres database, killed and restarted at will.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
  stopAll(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Processes sharing one store (`DATABASE_URL`, or `REFVID_STORE=pglite:<dir>`), one signing
 * secret and one data directory.
 */
export async function fleet(baseEnv: Record<string, string>): Promise<Fleet> {
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
      const child = spawn(process.execPath, [MAIN, "--role", role], {
        env: { PATH: process.env.PATH ?? "", ...shared, PORT: String(port), ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const p: RefvidProcess = { role, port, url: `http://127.0.0.1:${port}`, child, output: [] };
      child.stdout?.on("data", (c: Buffer) => p.output.push(c.toString()));
      child.stderr?.on("data", (c: Buffer) => p.output.push(c.toString()));
      running.add(p);
      const deadline = Date.now() + 30_000;
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
