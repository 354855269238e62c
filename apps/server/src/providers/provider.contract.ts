/**
 * The Provider contract: every provider makes a real, playable MP4 of the requested length,
 * reports progress, and stops promptly when its run is aborted.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ModelInput, type BuiltInModelSlug as ModelSlug, normalizeInput } from "@refvid/core";
import { describe, expect, it } from "vitest";
import { probeDuration } from "../media/ffmpeg.js";
import type { Provider, ProviderJob } from "./types.js";

const job = async (slug: ModelSlug, input: ModelInput): Promise<ProviderJob> => ({
  runId: "run_contract",
  request: normalizeInput(slug, input),
  input: input as Record<string, unknown>,
  workDir: await mkdtemp(join(tmpdir(), "provider-contract-")),
  references: [],
  maxDurationSeconds: 30,
});

export function describeProviderContract(
  name: string,
  make: () => Promise<Provider>,
  slowPrompt: string,
): void {
  describe(`${name} implements Provider`, () => {
    it.each<[string, ModelSlug, ModelInput, number]>([
      [
        "model-d 4 s",
        "lab-d/model-d/reference-to-video",
        { prompt: "p", image_urls: ["https://example.com/a.png"], duration: "4s" },
        4,
      ],
      [
        "model-c 2 s",
        "lab-c/model-c/reference-to-video",
        { prompt: "p", reference_image_urls: ["https://example.com/a.png"], duration: 2 },
        2,
      ],
    ])("makes a playable MP4 of the requested length (%s)", async (_label, slug, input, seconds) => {
      const provider = await make();
      const j = await job(slug, input);
      const progress: number[] = [];
      const result = await provider.run(j, {
        signal: new AbortController().signal,
        onProgress: (f) => progress.push(f),
      });
      expect(result.path.startsWith(j.workDir)).toBe(true);
      const probed = await probeDuration(result.path, { timeoutMs: 10_000 });
      expect(Math.abs(probed - seconds)).toBeLessThan(0.1);
      expect(Math.abs(result.durationSeconds - probed)).toBeLessThan(0.05);
      for (const f of progress) expect(f >= 0 && f <= 1).toBe(true);
      await rm(j.workDir, { recursive: true, force: true });
    });

    it("stops promptly when aborted", async () => {
      const provider = await make();
      const j = await job("lab-d/model-d/reference-to-video", {
        prompt: slowPrompt,
        image_urls: ["https://example.com/a.png"],
      });
      const controller = new AbortController();
      const started = Date.now();
      const running = provider.run(j, { signal: controller.signal, onProgress: () => {} });
      setTimeout(() => controller.abort(new Error("cancelled")), 100);
      await expect(running).rejects.toThrow("cancelled");
      expect(Date.now() - started).toBeLessThan(2_000);
      await rm(j.workDir, { recursive: true, force: true });
    });
  });
}
