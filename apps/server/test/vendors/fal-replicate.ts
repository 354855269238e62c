/**
 * The fal and Replicate protocol servers side by side, with a routing file that puts model-a on
 * fal and model-b on Replicate: what the exactly-once tests and the vendor webhook bench run
 * refvid against.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type FalKnobs, type FalServer, startFalServer } from "./fal-server.js";
import { type ReplicateKnobs, type ReplicateServer, startReplicateServer } from "./replicate-server.js";

export const FAL_ENDPOINT = "fal-ai/refvid-test/reference-to-video";
export const FAL_PATH = "/v1/run/lab-a/model-a/reference-to-video";
export const REPLICATE_PATH = "/v1/run/lab-b/model-b/reference-to-video";
export const IMG = "https://example.com/ref.png";

export interface FalAndReplicate {
  fal: FalServer;
  replicate: ReplicateServer;
  /** refvid's environment for them: the routing file, both credentials, fal's webhook keys. */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** Both servers with the same timing knobs, and the routing file for them. */
export async function startFalAndReplicate(
  knobs: Partial<FalKnobs> & Partial<ReplicateKnobs>,
): Promise<FalAndReplicate> {
  const [fal, replicate] = await Promise.all([
    startFalServer({ endpoints: [FAL_ENDPOINT], knobs }),
    startReplicateServer({ knobs }),
  ]);
  const dir = await mkdtemp(join(tmpdir(), "refvid-fal-replicate-"));
  const file = join(dir, "providers.json");
  await writeFile(
    file,
    JSON.stringify({
      providers: {
        "fal-main": { type: "fal", url: fal.url, token_env: "FAL_KEY" },
        replicate: { type: "replicate", url: replicate.url, token_env: "REPLICATE_API_TOKEN" },
      },
      routes: {
        "lab-a/model-a/reference-to-video": [{ provider: "fal-main", model: FAL_ENDPOINT }],
        "lab-b/model-b/reference-to-video": [{ provider: "replicate", model: replicate.model }],
      },
    }),
  );
  return {
    fal,
    replicate,
    env: {
      REFVID_PROVIDERS_FILE: file,
      FAL_KEY: fal.token,
      REPLICATE_API_TOKEN: replicate.token,
      REFVID_FAL_JWKS_URL: fal.jwksUrl,
    },
    close: async () => {
      await Promise.all([fal.close(), replicate.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The run a vendor job belongs to, from the webhook URL refvid gave it. */
export const runOfHook = (url: string | null) => (url ? decodeURIComponent(url.split("/").at(-2) ?? "") : "");
