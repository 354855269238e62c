/**
 * refvid in front of one Cog protocol server, the box "gpu-box", for end-to-end tests of a Cog
 * route: the routing file sends model-d to the box with the route's mapping, and a live tenant
 * has credit to spend.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestRefvid, type Tenant, type TenantOptions, type TestRefvid } from "../harness.js";
import { type CogServer, type CogServerOptions, startCogServer } from "./cog-server.js";

export const COG_MODEL_PATH = "/v1/run/lab-d/model-d/reference-to-video";

export interface CogStackOptions {
  cog: CogServerOptions;
  /** The route's mapping (`only`, `as_number`, ...). */
  route: Record<string, unknown>;
  /** The box's `max_concurrency` in the routing file. */
  maxConcurrency?: number;
  /** More environment for refvid. */
  env?: Record<string, string>;
  tenant?: TenantOptions;
}

export interface CogStack {
  cog: CogServer;
  t: TestRefvid;
  tenant: Tenant;
  /** Stops refvid and the box, and removes the routing file. */
  close(): Promise<void>;
}

/**
 * Writes a routing file in `dir` that sends model-d to the box at `url` ("gpu-box") with the route's
 * mapping (`prompt` and `duration` as a number unless told); its path.
 */
export async function writeCogRoutes(
  dir: string,
  url: string,
  options: { route?: Record<string, unknown>; maxConcurrency?: number } = {},
): Promise<string> {
  const file = join(dir, "providers.json");
  const box = { type: "cog", url, max_concurrency: options.maxConcurrency };
  const route = options.route ?? { only: ["prompt", "duration"], as_number: ["duration"] };
  const routes = { "lab-d/model-d/reference-to-video": [{ provider: "gpu-box", ...route }] };
  await writeFile(file, JSON.stringify({ providers: { "gpu-box": box }, routes }));
  return file;
}

export async function startCogStack(options: CogStackOptions): Promise<CogStack> {
  const cog = await startCogServer(options.cog);
  const dir = await mkdtemp(join(tmpdir(), "refvid-cog-stack-"));
  let t: TestRefvid | undefined;
  const close = async () => {
    await t?.close();
    await cog.close();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const file = await writeCogRoutes(dir, cog.url, options);
    t = await startTestRefvid({ REFVID_PROVIDERS_FILE: file, REFVID_UPSTREAM_POLL_MS: "25", ...options.env });
    const tenant = await t.tenant({
      environment: "live",
      rateLimitPerMinute: 100_000,
      balanceUsd: "100.00",
      ...options.tenant,
    });
    return { cog, t, tenant, close };
  } catch (err) {
    await close();
    throw err;
  }
}
