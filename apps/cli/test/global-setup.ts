/**
 * One real refvid server for the whole suite (see refvid-server.ts). Each test file makes its own
 * organizations and keys through the admin API, so files do not see each other's runs.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { startRefvidServer } from "./refvid-server.js";

const CLI = fileURLToPath(new URL("../dist/main.js", import.meta.url));

declare module "vitest" {
  export interface ProvidedContext {
    baseUrl: string;
    adminToken: string;
    /** Where tests make their homes, configs and downloads; removed after the suite. */
    scratch: string;
  }
}

export default async function setup(project: TestProject) {
  if (!existsSync(CLI)) {
    throw new Error(`${CLI} is missing: build first (npx turbo run build --filter=@refvid/cli)`);
  }
  const server = await startRefvidServer();
  const scratch = await mkdtemp(join(tmpdir(), "refvid-cli-test-"));
  project.provide("baseUrl", server.baseUrl);
  project.provide("adminToken", server.adminToken);
  project.provide("scratch", scratch);

  return async () => {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  };
}
