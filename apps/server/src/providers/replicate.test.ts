/**
 * The Replicate adapter against the local Replicate predictions API (test/vendors/replicate-server.ts)
 * over real HTTP. Waits of seconds (Retry-After, backoff) run on a ManualClock moved quickly by
 * `fastTime`; everything else runs in real time with short latencies and polls.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { normalizeInput } from "@refvid/core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type MalformedOutput,
  type PredictionStat,
  type ReplicateServer,
  type ReplicateServerOptions,
  startReplicateServer,
} from "../../test/vendors/replicate-server.js";
import { vendorInputSchema } from "../../test/vendors/vendor-schemas.js";
import { type Clock, type Scheduler, systemClock, systemScheduler } from "../clock.js";
import { ManualClock } from "../manual-clock.js";
import { probeDuration } from "../media/ffmpeg.js";
import { describeProviderContract } from "./provider.contract.js";
import { ReplicateProvider, type ReplicateProviderOptions } from "./replicate.js";
import { replicateTarget } from "./replicate-model.js";
import {
  LeaveUpstreamRunning,
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type UpstreamJob,
} from "./types.js";
import { VendorError } from "./upstream/vendor-http.js";

const NAME = "replicate-test";
const FAST = { latencyMs: 100, queueMs: 20 };

let server: ReplicateServer;
const servers: ReplicateServer[] = [];
const workDirs: string[] = [];

async function start(options: ReplicateServerOptions = {}): Promise<ReplicateServer> {
  server = await startReplicateServer({ ...options, knobs: { ...FAST, ...options.knobs } });
  servers.push(server);
  return server;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

function provider(
  overrides: Partial<ReplicateProviderOptions> = {},
  time: Clock & Scheduler = { now: systemClock.now, setTimeout: systemScheduler.setTimeout },
): ReplicateProvider {
  return new ReplicateProvider({
    name: NAME,
    url: server.url,
    token: server.token,
    model: server.model,
    allowLocalOutputs: true,
    scheduler: time,
    clock: time,
    pollMs: 20,
    ...overrides,
  });
}

async function job(input: Record<string, unknown> = { prompt: "a fox in the snow", duration: 2 }) {
  const workDir = await mkdtemp(join(tmpdir(), "replicate-adapter-"));
  workDirs.push(workDir);
  const request = normalizeInput("lab-c/model-c/reference-to-video", {
    prompt: String(input.prompt ?? "p"),
    reference_image_urls: ["https://example.com/a.png"],
  });
  return {
    runId: "run_replicate",
    request,
    input,
    workDir,
    references: [],
    maxDurationSeconds: 15,
  } satisfies ProviderJob;
}

function context(overrides: Partial<ProviderContext> = {}): ProviderContext & { progress: number[] } {
  const progress: number[] = [];
  return {
    signal: new AbortController().signal,
    onProgress: (f) => progress.push(f),
    progress,
    ...overrides,
  };
}

/** Polls `check` every 5 ms until it returns a value. */
async function until<T>(check: () => T | undefined, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Moves a ManualClock `stepMs` at a time, a real millisecond or so apart, until stopped. */
function fastTime(clock: ManualClock, stepMs = 25): () => Promise<void> {
  let running = true;
  const loop = (async () => {
    while (running) {
      await clock.advance(stepMs);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();
  return async () => {
    running = false;
    await loop;
  };
}

/** Statuses the server answered to each kind of request, in order. */
const answered = (kind: string) => server.stats.requests.filter((r) => r.kind === kind).map((r) => r.status);

/** The one prediction the server holds. */
function onlyPrediction(): PredictionStat {
  expect(server.stats.predictions.size).toBe(1);
  return [...server.stats.predictions.values()][0] as PredictionStat;
}

// --- the Provider contract -----------------------------------------------------------------------

const SLOW_PROMPT = "a very slow dolly shot";
let contractServer: ReplicateServer;
beforeAll(async () => {
  contractServer = await startReplicateServer({ knobs: FAST });
});
afterAll(() => contractServer.close());

describeProviderContract(
  "ReplicateProvider",
  async () => {
    const adapter = new ReplicateProvider({
      name: NAME,
      url: contractServer.url,
      token: contractServer.token,
      model: contractServer.model,
      allowLocalOutputs: true,
      scheduler: systemScheduler,
      clock: systemClock,
      pollMs: 20,
    });
    // The served model, like Replicate's video models, takes `duration` in whole seconds, and a
    // route's mapping renames fields but does not convert values: present the input that way. The
    // slow prompt makes the model slow, so the abort lands while the prediction runs.
    return {
      usesReferences: adapter.usesReferences,
      run: (j: ProviderJob, c: ProviderContext) => {
        contractServer.knobs.latencyMs = j.request.prompt === SLOW_PROMPT ? 60_000 : FAST.latencyMs;
        return adapter.run({ ...j, input: { ...j.input, duration: j.request.duration } }, c);
      },
    } satisfies Provider;
  },
  SLOW_PROMPT,
);

// --- the adapter ---------------------------------------------------------------------------------

describe("replicateTarget", () => {
  it.each([
    ["owner/name", { kind: "model", owner: "owner", name: "name" }],
    ["kwaivgi/kling-v2.1", { kind: "model", owner: "kwaivgi", name: "kling-v2.1" }],
    [`owner/name:${"a1".repeat(32)}`, { kind: "version", id: "a1".repeat(32) }],
    ["a1".repeat(32), { kind: "version", id: "a1".repeat(32) }],
  ])("reads %s", (model, target) => {
    expect(replicateTarget(model)).toEqual(target);
  });

  it.each(["", "owner/", "/name", "a/b/c", "owner/name:", "owner name"])("refuses %j", (model) => {
    expect(() => replicateTarget(model)).toThrow(/owner\/name, owner\/name:version or a version id/);
  });
});

describe("ReplicateProvider", () => {
  it("makes the video from an official model's prediction, with the route's input and progress", async () => {
    await start({ knobs: { latencyMs: 200, progressSteps: 4 } });
    const j = await job({ prompt: "a fox in the snow", duration: 3, aspect_ratio: "16:9" });
    const c = context();
    const result = await provider({ mapping: { rename: { aspect_ratio: "ratio" }, input: { fps: 24 } } }).run(
      j,
      c,
    );

    expect(result.path.startsWith(j.workDir)).toBe(true);
    const probed = await probeDuration(result.path, { timeoutMs: 10_000 });
    expect(Math.abs(probed - 3)).toBeLessThan(0.1);
    expect(Math.abs(result.durationSeconds - probed)).toBeLessThan(0.05);
    const prediction = onlyPrediction();
    expect(prediction).toMatchObject({
      route: "model",
      input: { prompt: "a fox in the snow", duration: 3, ratio: "16:9", fps: 24 },
      status: "succeeded",
      canceled: false,
      preferWaitSeconds: null,
    });
    expect(server.stats).toMatchObject({ submits: 1, submitAttempts: 1, cancels: 0, downloads: 1 });
    // Progress from the prediction's tqdm lines while it ran, then 1 once the video is home.
    expect(c.progress.length).toBeGreaterThanOrEqual(2);
    expect(c.progress.slice(0, -1).every((f) => f > 0 && f < 1)).toBe(true);
    expect(c.progress).toEqual([...c.progress].sort((a, b) => a - b));
    expect(c.progress.at(-1)).toBe(1);
  });

  it("creates on a version, given as owner/name:version or as the version id, and takes a list's video", async () => {
    await start({ knobs: { outputShape: "list" } });
    for (const model of [`${server.model}:${server.versionId}`, server.versionId]) {
      const result = await provider({ model }).run(await job(), context());
      expect(Math.abs(result.durationSeconds - 2)).toBeLessThan(0.1);
    }
    expect([...server.stats.predictions.values()].map((p) => p.route)).toEqual(["version", "version"]);
    expect(server.stats.submits).toBe(2);
  });

  it("records the prediction once, as soon as Replicate accepted it and before it ended", async () => {
    await start({ knobs: { queueMs: 100 } });
    const recorded: { job: UpstreamJob; status: unknown; statusCalls: number }[] = [];
    await provider().run(
      await job(),
      context({
        recordUpstream: async (upstream) => {
          recorded.push({
            job: upstream,
            status: server.prediction(upstream.id)?.status,
            statusCalls: server.stats.statusCalls,
          });
        },
      }),
    );
    const prediction = onlyPrediction();
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({
      job: {
        provider: NAME,
        id: prediction.id,
        urls: {
          get: `${server.url}/v1/predictions/${prediction.id}`,
          cancel: `${server.url}/v1/predictions/${prediction.id}/cancel`,
        },
      },
      status: "starting",
      statusCalls: 0,
    });
  });

  it("cancels the prediction when it cannot be recorded, and rethrows why", async () => {
    await start({ knobs: { latencyMs: 60_000 } });
    const failure = new Error("store unreachable");
    const running = provider().run(
      await job(),
      context({
        recordUpstream: async () => {
          throw failure;
        },
      }),
    );
    await expect(running).rejects.toBe(failure);
    expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: true });
  });

  it("sends the run's deadline as Cancel-After", async () => {
    await start();
    const deadline = Date.now() + 60_000;
    await provider().run(await job(), context({ deadline }));
    const prediction = server.prediction(onlyPrediction().id) as { deadline?: string; created_at: string };
    const after = Date.parse(prediction.deadline ?? "") - Date.parse(prediction.created_at);
    expect(after).toBeGreaterThan(58_000);
    expect(after).toBeLessThanOrEqual(60_000);
  });

  describe("resuming a prediction another worker started", () => {
    /** A worker that records the prediction and then dies: its run never goes on. */
    async function startedElsewhere(): Promise<UpstreamJob> {
      let recorded: UpstreamJob | undefined;
      void provider().run(
        await job(),
        context({
          recordUpstream: (upstream) => {
            recorded = upstream;
            return new Promise(() => {});
          },
        }),
      );
      return until(() => recorded);
    }

    it("follows it to its end without submitting again, while it runs", async () => {
      await start({ knobs: { latencyMs: 300 } });
      const upstream = await startedElsewhere();
      server.stats.submits = 0;
      const c = context({ upstream, recordUpstream: async () => expect.fail("recorded again") });
      const result = await provider().run(await job(), c);
      expect(Math.abs(result.durationSeconds - 2)).toBeLessThan(0.1);
      expect(server.stats.submits).toBe(0);
      expect(server.stats.submitAttempts).toBe(1);
      expect(c.progress.at(-1)).toBe(1);
    });

    it("downloads the output of one that already finished, from its id alone", async () => {
      await start();
      const { id } = await startedElsewhere();
      await until(() => (server.prediction(id)?.status === "succeeded" ? true : undefined));
      server.stats.submits = 0;
      const result = await provider().run(
        await job(),
        context({ upstream: { provider: NAME, id, urls: {} } }),
      );
      expect(Math.abs(result.durationSeconds - 2)).toBeLessThan(0.1);
      expect(server.stats.submits).toBe(0);
    });

    it("refuses a vendor job of another provider without calling Replicate", async () => {
      await start();
      const upstream = { provider: "fal-main", id: "req_1", urls: {} };
      const running = provider().run(await job(), context({ upstream }));
      await expect(running).rejects.toThrow(/belongs to fal-main, not replicate-test/);
      expect(server.stats.requests).toEqual([]);
    });
  });

  describe("a prediction that does not succeed", () => {
    it("fails with the prediction's error when the model fails", async () => {
      await start({ knobs: { failNext: 1, failMessage: "CUDA out of memory. Tried to allocate 2.00 GiB" } });
      const running = provider().run(await job(), context());
      await expect(running).rejects.toBeInstanceOf(ProviderError);
      await expect(running).rejects.toThrow(
        /prediction \w+ failed: CUDA out of memory\. Tried to allocate 2\.00 GiB/,
      );
      expect(server.stats.cancels).toBe(0);
    });

    it("fails when Replicate aborts it before it runs", async () => {
      await start({ knobs: { abortNext: 1 } });
      const running = provider().run(await job(), context());
      await expect(running).rejects.toBeInstanceOf(ProviderError);
      await expect(running).rejects.toThrow(/aborted by Replicate before it ran/);
    });

    it("fails when it is canceled upstream (here by its Cancel-After deadline)", async () => {
      // 10 ms per protocol second: Cancel-After of the run's 6 s cancels it after 60 ms.
      await start({ secondMs: 10, knobs: { queueMs: 0, latencyMs: 5_000 } });
      const running = provider().run(await job(), context({ deadline: Date.now() + 6_500 }));
      await expect(running).rejects.toBeInstanceOf(ProviderError);
      await expect(running).rejects.toThrow(/canceled upstream, not by refvid/);
      expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: false });
    });

    it.each<MalformedOutput>(["not-a-url", "not-a-video", "null", "empty-list"])(
      "fails on an unusable output (%s)",
      async (malformed) => {
        await start({ knobs: { malformedOutput: malformed } });
        const running = provider().run(await job(), context());
        await expect(running).rejects.toBeInstanceOf(ProviderError);
      },
    );

    it("fails when Replicate has already removed the output", async () => {
      await start({ knobs: { dataRetentionMs: 0 } });
      const running = provider().run(await job(), context());
      await expect(running).rejects.toThrow(/Replicate has removed its output/);
    });
  });

  describe("an input the model refuses (422 at the create)", () => {
    const MODEL = "bytedance/seedance-2.0";

    it("is a ProviderError naming each field in Replicate's words, sent once and never followed", async () => {
      await start({ model: MODEL, inputSchemas: { [MODEL]: vendorInputSchema("replicate", MODEL) } });
      const recorded: UpstreamJob[] = [];
      const running = provider().run(
        await job({ duration: 20, seed: "7" }),
        context({ recordUpstream: async (u) => void recorded.push(u) }),
      );
      await expect(running).rejects.toBeInstanceOf(ProviderError);
      await expect(running).rejects.toThrow(
        "The model refused the input: input: prompt is required; " +
          "input.duration: Must be less than or equal to 15; " +
          "input.seed: Invalid type. Expected: integer, given: string",
      );
      expect(server.stats.requests).toEqual([
        expect.objectContaining({
          kind: "submit",
          status: 422,
          body: { input: { duration: 20, seed: "7" } },
        }),
      ]);
      expect(recorded).toEqual([]);
    });

    it("an unknown version stays the vendor's refusal of the call (another route may serve the run)", async () => {
      await start();
      const running = provider({ model: "0123abcd" }).run(await job(), context());
      await expect(running).rejects.toBeInstanceOf(VendorError);
      await expect(running).rejects.not.toBeInstanceOf(ProviderError);
      await expect(running).rejects.toThrow(
        /^submit failed: replicate-test answered 422 to POST \/v1\/predictions: The specified version does not exist/,
      );
      expect(answered("submit")).toEqual([422]);
    });
  });

  describe("a busy or failing API", () => {
    it("waits out 429s as Retry-After asks, on submit and on status", async () => {
      await start({ knobs: { rateLimitNext: 1, rateLimitKind: "submit", retryAfterSeconds: 1 } });
      const clock = new ManualClock();
      const began = clock.now().getTime();
      let recordedAfter = 0;
      const stop = fastTime(clock);
      try {
        await provider({ pollMs: 200 }, clock).run(
          await job(),
          context({
            deadline: began + 60_000,
            recordUpstream: async () => {
              recordedAfter = clock.now().getTime() - began;
              server.knobs.rateLimitKind = "status";
              server.knobs.rateLimitNext = 1;
            },
          }),
        );
      } finally {
        await stop();
      }
      expect(answered("submit")).toEqual([429, 201]);
      expect(answered("status")[0]).toBe(429);
      expect(
        answered("status")
          .slice(1)
          .every((s) => s === 200),
      ).toBe(true);
      expect(recordedAfter).toBeGreaterThanOrEqual(1_000);
      expect(clock.now().getTime() - began).toBeGreaterThanOrEqual(2_000);
      expect(server.stats.submits).toBe(1);
    });

    it("rides out 5xx bursts on submit and on status", async () => {
      await start({ knobs: { serverErrorNext: 3, serverErrorKind: "submit", serverErrorStatus: 503 } });
      const clock = new ManualClock();
      const stop = fastTime(clock);
      try {
        const result = await provider({ pollMs: 200 }, clock).run(
          await job(),
          context({
            deadline: clock.now().getTime() + 60_000,
            recordUpstream: async () => {
              server.knobs.serverErrorKind = "status";
              server.knobs.serverErrorStatus = 502;
              server.knobs.serverErrorNext = 3;
            },
          }),
        );
        expect(Math.abs(result.durationSeconds - 2)).toBeLessThan(0.1);
      } finally {
        await stop();
      }
      expect(answered("submit")).toEqual([503, 503, 503, 201]);
      expect(answered("status").slice(0, 3)).toEqual([502, 502, 502]);
      expect(server.stats.submits).toBe(1);
    });

    it("gives up at the deadline when Replicate keeps answering 429 to the submit, as a failed submit", async () => {
      await start({ knobs: { rateLimitNext: 1_000, rateLimitKind: "submit" } });
      const clock = new ManualClock();
      const recorded: UpstreamJob[] = [];
      const stop = fastTime(clock, 100);
      let error: unknown;
      try {
        await provider({}, clock)
          .run(
            await job(),
            context({
              deadline: clock.now().getTime() + 10_000,
              recordUpstream: async (u) => void recorded.push(u),
            }),
          )
          .catch((err: unknown) => {
            error = err;
          });
      } finally {
        await stop();
      }
      expect(error).toBeInstanceOf(VendorError);
      expect(error).toMatchObject({
        status: 429,
        retryable: true,
        message: expect.stringMatching(/^submit failed: /),
      });
      expect(recorded).toEqual([]);
      expect(server.stats.submits).toBe(0);
      expect(answered("submit").length).toBeGreaterThan(1);
    });

    it("gives up at the deadline when Replicate keeps answering 429 to the status, and cancels", async () => {
      await start({ knobs: { rateLimitNext: 1_000, rateLimitKind: "status", latencyMs: 60_000 } });
      const clock = new ManualClock();
      const stop = fastTime(clock, 100);
      let error: unknown;
      try {
        await provider({}, clock)
          .run(await job(), context({ deadline: clock.now().getTime() + 10_000 }))
          .catch((err: unknown) => {
            error = err;
          });
      } finally {
        await stop();
      }
      expect(error).toBeInstanceOf(VendorError);
      expect(error).toMatchObject({ status: 429, retryable: true });
      expect((error as Error).message).not.toMatch(/submit failed/);
      expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: true });
    });

    it("abandons a hanging status call at the deadline, and cancels", async () => {
      await start({ knobs: { hangStatus: true, latencyMs: 60_000 } });
      const began = Date.now();
      const running = provider().run(await job(), context({ deadline: began + 500 }));
      await expect(running).rejects.toThrow(/no answer in time/);
      expect(Date.now() - began).toBeLessThan(3_000);
      expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: true });
    });
  });

  describe("abort", () => {
    it("cancels the prediction and rethrows the signal's reason", async () => {
      await start({ knobs: { latencyMs: 60_000 } });
      const controller = new AbortController();
      const reason = new Error("run cancelled");
      const running = provider().run(await job(), context({ signal: controller.signal }));
      await until(() => (server.stats.statusCalls >= 2 ? true : undefined));
      controller.abort(reason);
      await expect(running).rejects.toBe(reason);
      expect(server.stats.cancels).toBe(1);
      expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: true });
    });

    it("cancels when aborted during a hanging status call", async () => {
      await start({ knobs: { hangStatus: true, latencyMs: 60_000 } });
      const controller = new AbortController();
      const reason = new Error("run timed out");
      const running = provider().run(await job(), context({ signal: controller.signal }));
      await until(() => (server.stats.statusCalls >= 1 ? true : undefined));
      const began = Date.now();
      controller.abort(reason);
      await expect(running).rejects.toBe(reason);
      expect(Date.now() - began).toBeLessThan(2_000);
      expect(onlyPrediction()).toMatchObject({ status: "canceled", canceled: true });
    });

    it("leaves the prediction running when the run goes on elsewhere (LeaveUpstreamRunning)", async () => {
      await start({ knobs: { latencyMs: 60_000 } });
      const controller = new AbortController();
      const reason = new LeaveUpstreamRunning("worker shutting down");
      const running = provider().run(await job(), context({ signal: controller.signal }));
      await until(() => (server.stats.statusCalls >= 1 ? true : undefined));
      controller.abort(reason);
      await expect(running).rejects.toBe(reason);
      expect(server.stats.cancels).toBe(0);
      expect(onlyPrediction().status).toMatch(/starting|processing/);
    });

    it("submits nothing when aborted before it starts", async () => {
      await start();
      const controller = new AbortController();
      const reason = new Error("run cancelled");
      controller.abort(reason);
      await expect(provider().run(await job(), context({ signal: controller.signal }))).rejects.toBe(reason);
      expect(server.stats.requests).toEqual([]);
    });
  });

  it("never puts the token in an error", async () => {
    await start({ knobs: { failNext: 1 } });
    server.knobs.failMessage = `upstream echoed ${server.token} back`;
    const errors: unknown[] = [];
    await provider()
      .run(await job(), context())
      .catch((err: unknown) => errors.push(err));
    const wrong = `r8_${"0".repeat(36)}`;
    await provider({ token: wrong })
      .run(await job(), context())
      .catch((err: unknown) => errors.push(err));

    expect(errors).toHaveLength(2);
    expect(errors[0]).toBeInstanceOf(ProviderError);
    expect((errors[0] as Error).message).toContain("upstream echoed [redacted] back");
    expect(errors[1]).toBeInstanceOf(VendorError);
    expect(errors[1]).toMatchObject({
      status: 401,
      retryable: false,
      message: expect.stringMatching(/^submit failed: /),
    });
    for (const err of errors) {
      expect((err as Error).message).not.toContain(server.token);
      expect((err as Error).message).not.toContain(wrong);
    }
  });
});
