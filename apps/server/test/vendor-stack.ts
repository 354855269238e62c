/**
 * refvid in front of the project's fal, Replicate and Cog protocol servers, for end-to-end tests
 * of routes: each vendor queues briefly and answers in about 150 ms with a video of
 * OUTPUT_SECONDS, refvid reads a catalog or routing file written for their URLs, and a live
 * tenant has credit to spend.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestRefvid, type Tenant, type TestRefvid } from "./harness.js";
import { type CogServer, type CogServerOptions, startCogServer } from "./vendors/cog-server.js";
import { type FalServer, type FalServerOptions, startFalServer } from "./vendors/fal-server.js";
import {
  type ReplicateServer,
  type ReplicateServerOptions,
  startReplicateServer,
} from "./vendors/replicate-server.js";

/** The length of every vendor's video, which runs are billed by. */
export const OUTPUT_SECONDS = 3;

export interface Vendors {
  fal: FalServer;
  replicate: ReplicateServer;
  cog: CogServer;
}

export interface VendorStackOptions {
  /** What each vendor serves and checks; their timing is the stack's. */
  fal: Omit<FalServerOptions, "knobs">;
  replicate: Omit<ReplicateServerOptions, "knobs">;
  cog: Omit<CogServerOptions, "knobs">;
  /** The file refvid reads: its name in a fresh folder, the variable naming it, its text for these vendors. */
  file: {
    name: string;
    variable: "REFVID_CATALOG_FILE" | "REFVID_PROVIDERS_FILE";
    text(vendors: Vendors): string | Promise<string>;
  };
  /** More environment for refvid, such as tokens the file names beyond FAL_KEY and REPLICATE_API_TOKEN. */
  env?: Record<string, string>;
}

export interface VendorStack extends Vendors {
  /** The file refvid reads; a test may rewrite it and reload the catalog. */
  file: string;
  t: TestRefvid;
  tenant: Tenant;
  /** Stops refvid and the vendors, and removes the file. */
  close(): Promise<void>;
}

export async function startVendorStack(options: VendorStackOptions): Promise<VendorStack> {
  const knobs = { queueMs: 20, latencyMs: 150, outputSeconds: OUTPUT_SECONDS };
  const [fal, replicate, cog] = await Promise.all([
    startFalServer({ ...options.fal, knobs }),
    startReplicateServer({ ...options.replicate, knobs }),
    startCogServer({
      ...options.cog,
      knobs: { latencyMs: 150, outputSeconds: OUTPUT_SECONDS, outputAs: "url" },
    }),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "refvid-vendor-stack-"));
  let t: TestRefvid | undefined;
  const stop = async () => {
    await t?.close();
    await Promise.all([fal.close(), replicate.close(), cog.close()]);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const file = join(dir, options.file.name);
    await writeFile(file, await options.file.text({ fal, replicate, cog }));
    t = await startTestRefvid({
      [options.file.variable]: file,
      FAL_KEY: fal.token,
      REPLICATE_API_TOKEN: replicate.token,
      REFVID_UPSTREAM_POLL_MS: "25",
      ...options.env,
    });
    const tenant = await t.tenant({ environment: "live", rateLimitPerMinute: 100_000, balanceUsd: "100.00" });
    return { fal, replicate, cog, file, t, tenant, close: stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
