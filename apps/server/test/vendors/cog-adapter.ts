/**
 * What the tests of the Cog adapter (src/providers/cog*.test.ts) share: the route's provider over
 * a box, a run's job and context keeping what the provider reported and recorded, and waits.
 */
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ModelInput, normalizeInput } from "@refvid/core";
import { systemClock, systemScheduler } from "../../src/clock.js";
import { CogProvider, type CogProviderOptions } from "../../src/providers/cog.js";
import type { ProviderContext, ProviderJob, UpstreamJob } from "../../src/providers/types.js";
import { type CogServer, type CogServerOptions, startCogServer } from "./cog-server.js";

export const NAME = "gpu-box";

/** The model's `predict()` arguments: refvid's fields, as a route would expose them. */
export const SCHEMA: NonNullable<CogServerOptions["input"]> = {
  properties: {
    prompt: { type: "string" },
    image_urls: { type: "array" },
    reference_image_urls: { type: "array" },
    images: { type: "array" },
    num_frames: { type: "integer" },
  },
  required: ["prompt"],
};

export function cogProvider(url: string, overrides: Partial<CogProviderOptions> = {}): CogProvider {
  return new CogProvider({
    name: NAME,
    url,
    token: null,
    allowLocalOutputs: true,
    scheduler: systemScheduler,
    clock: systemClock,
    pollMs: 10,
    acceptAfterMs: 60,
    maxBackoffMs: 100,
    ...overrides,
  });
}

const workDirs: string[] = [];
const boxes: CogServer[] = [];
/** What else a test started and must stop (`closeBoxes` runs them). */
export const closers: (() => Promise<void>)[] = [];

/** A Cog box taking `SCHEMA`, its model quick unless told otherwise; `closeBoxes` closes it. */
export async function startBox(options: CogServerOptions = {}): Promise<CogServer> {
  const server = await startCogServer({
    input: SCHEMA,
    ...options,
    knobs: { latencyMs: 80, ...options.knobs },
  });
  boxes.push(server);
  return server;
}

/** Closes the boxes started since, and runs `closers` (for `afterEach`). */
export async function closeBoxes(): Promise<void> {
  await Promise.all([...boxes.splice(0).map((s) => s.close()), ...closers.splice(0).map((c) => c())]);
}

/** Removes the jobs' scratch directories (for `afterAll`). */
export async function removeWorkDirs(): Promise<void> {
  await Promise.all(workDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/** A run's job, with a scratch directory of its own. */
export async function cogJob(input: Record<string, unknown> = {}): Promise<ProviderJob> {
  const full = {
    prompt: "a dolly shot",
    image_urls: ["https://example.com/a.png"],
    duration: "4s",
    ...input,
  };
  const workDir = await mkdtemp(join(tmpdir(), "cog-provider-"));
  workDirs.push(workDir);
  return {
    runId: `run_${randomUUID().replaceAll("-", "")}`,
    request: normalizeInput("lab-d/model-d/reference-to-video", full as ModelInput),
    input: full,
    workDir,
    references: [],
    maxDurationSeconds: 30,
  };
}

export interface Recorded {
  upstream: UpstreamJob;
  /** The prediction's state at Cog when it was recorded. */
  statusThen: string | undefined;
}

/** A run's context, keeping what the provider reported and recorded. */
export function runContext(server: CogServer | null, overrides: Partial<ProviderContext> = {}) {
  const progress: number[] = [];
  const recorded: Recorded[] = [];
  const controller = new AbortController();
  const ctx: ProviderContext = {
    signal: controller.signal,
    onProgress: (fraction) => progress.push(fraction),
    recordUpstream: async (upstream) => {
      recorded.push({ upstream, statusThen: server?.jobsFor(upstream.id).at(-1)?.status });
    },
    ...overrides,
  };
  return { ctx, progress, recorded, controller };
}

/** Polls until `check` answers something truthy, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** What `promise` rejected with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (err: unknown) => err,
  );
}
