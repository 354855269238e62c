/**
 * One real refvid server for the whole suite: the built `apps/server/dist/main.js` on a loopback
 * port, in memory, with the simulated provider. Each test file makes its own organizations and
 * keys through the admin API, so files do not see each other's runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const SERVER = fileURLToPath(new URL("../../server/dist/main.js", import.meta.url));
const CLI = fileURLToPath(new URL("../dist/main.js", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    /** Where tests make their homes, configs and downloads; removed after the suite. */
    scratch: string;
  }
}

/** A port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
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

export default async function setup(project: TestProject) {
  for (const [file, what] of [
    [SERVER, "@refvid/server"],
    [CLI, "@refvid/cli"],
  ] as const) {
    if (!existsSync(file)) {
      throw new Error(`${file} is missing: build first (npx turbo run build --filter=${what})`);
    }
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
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout?.on("data", (c: Buffer) => output.push(c.toString()));
  child.stderr?.on("data", (c: Buffer) => output.push(c.toString()));
  await waitForHealth(baseUrl, child, output);
  const scratch = await mkdtemp(join(tmpdir(), "refvid-cli-test-"));
  project.provide("baseUrl", baseUrl);
  project.provide("adminToken", adminToken);
  project.provide("scratch", scratch);

  return async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      const forced = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(forced);
    }
    await rm(dataDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
  };
}
