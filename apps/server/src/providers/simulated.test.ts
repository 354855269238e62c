import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeInput } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { describeProviderContract } from "./provider.contract.js";
import { SimulatedProvider } from "./simulated.js";
import { ProviderError } from "./types.js";

const cacheDir = await mkdtemp(join(tmpdir(), "simulated-cache-"));
const make = async () => new SimulatedProvider({ latencyMs: 20, cacheDir });

describeProviderContract("SimulatedProvider", make, "slow [simulate:delay=60000]");

describe("SimulatedProvider directives", () => {
  const job = async (prompt: string) => ({
    runId: "run_x",
    request: normalizeInput("lab-d/model-d/reference-to-video", {
      prompt,
      image_urls: ["https://example.com/a.png"],
      duration: "4s",
    }),
    input: {},
    workDir: await mkdtemp(join(tmpdir(), "simulated-")),
    references: [],
    maxDurationSeconds: 30,
  });

  it("fails with a provider error on [simulate:fail]", async () => {
    const provider = await make();
    const run = provider.run(await job("x [simulate:fail]"), {
      signal: new AbortController().signal,
      onProgress: () => {},
    });
    await expect(run).rejects.toBeInstanceOf(ProviderError);
  });

  it("takes [simulate:delay=MS] instead of the configured latency", async () => {
    const provider = await make();
    const started = Date.now();
    await provider.run(await job("x [simulate:delay=400]"), {
      signal: new AbortController().signal,
      onProgress: () => {},
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });
});
