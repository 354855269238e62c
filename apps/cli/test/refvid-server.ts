/**
 * A real refvid server for the CLI's tests: the built `apps/server/dist/main.js` on a loopback
 * port, in memory, with the simulated provider, plus whatever `env` adds (a catalog file).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@refvid/test-browser/ports";

const SERVER = fileURLToPath(new URL("../../server/dist/main.js", import.meta.url));

/** Where a server listens, and the token of its admin API. */
export interface ServerAddress {
  baseUrl: string;
  adminToken: string;
}

export interface RefvidServer extends ServerAddress {
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes its data. */
  stop(): Promise<void>;
}

async function waitForHealth(url: string, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the refvid server exited: ${output.join("")}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(`the refvid server did not answer /healthz: ${output.join("")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts the server and resolves once it answers `/healthz`. */
export async function startRefvidServer(env: Record<string, string> = {}): Promise<RefvidServer> {
  if (!existsSync(SERVER)) {
    throw new Error(`${SERVER} is missing: build first (npx turbo run build --filter=@refvid/server)`);
  }
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const adminToken = randomBytes(24).toString("hex");
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-cli-server-"));
  const child = spawn(process.execPath, [SERVER], {
    env: {
      PATH: process.env.PATH ?? "",
      REFVID_STORE: "memory",
      PORT: String(port),
      HOST: "127.0.0.1",
      REFVID_PUBLIC_URL: baseUrl,
      REFVID_ADMIN_TOKEN: adminToken,
      REFVID_PROVIDER: "simulated",
      REFVID_SIMULATED_LATENCY_MS: "300",
      REFVID_SEED_DEMO: "false",
      LOG_LEVEL: "silent",
      REFVID_DATA_DIR: dataDir,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (c: Buffer) => output.push(c.toString()));
  child.stderr?.on("data", (c: Buffer) => output.push(c.toString()));
  await waitForHealth(baseUrl, child, output);
  return {
    baseUrl,
    adminToken,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        const forced = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(forced);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
