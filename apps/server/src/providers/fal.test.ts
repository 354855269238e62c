/**
 * FalProvider against the local fal queue API (test/vendors/fal-server.ts) over real HTTP: the
 * Provider contract, the whole request life (submit, record, poll with progress, result, output),
 * resuming another worker's request, the model's failures, retries and deadlines, and cancel.
 */

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { normalizeInput } from "@refvid/core";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type FalKnobs, type FalServer, startFalServer } from "../../test/vendors/fal-server.js";
import { vendorInputSchema } from "../../test/vendors/vendor-schemas.js";
import { type Scheduler, systemClock, systemScheduler } from "../clock.js";
import { probeDuration } from "../media/ffmpeg.js";
import { FalProvider, type FalProviderOptions } from "./fal.js";
import { describeProviderContract } from "./provider.contract.js";
import {
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type UpstreamJob,
} from "./types.js";
import { VendorError } from "./upstream/vendor-http.js";

const ENDPOINT = "fal-ai/refvid-test/reference-to-video";
/** An endpoint whose published input schema the server checks. */
const SEEDANCE = "bytedance/seedance-2.0/reference-to-video";
const SLOW_PROMPT = "a slow, very long take";
const KNOBS: Partial<FalKnobs> = { queueMs: 10, latencyMs: 60 };
const DEFAULT_FAILURE = {
  status: 500,
  type: "internal_server_error",
  message: "The model failed to generate a video.",
};

let fal: FalServer;
const workDirs: string[] = [];

beforeAll(async () => {
  fal = await startFalServer({
    endpoints: [ENDPOINT, SEEDANCE],
    knobs: KNOBS,
    inputSchemas: { [SEEDANCE]: vendorInputSchema("fal", SEEDANCE) },
  });
});
afterAll(async () => {
  await fal.close();
  await Promise.all(workDirs.map((dir) => rm(dir, { recursive: true, force: true })));
});
afterEach(() => {
  Object.assign(fal.knobs, {
    ...KNOBS,
    failNext: 0,
    failure: DEFAULT_FAILURE,
    rateLimitNext: {},
    serverErrorNext: {},
    serverErrorStatus: 503,
    hangStatus: false,
    malformedOutput: false,
    outputSeconds: null,
    honourCancel: true,
  });
});

function provider(overrides: Partial<FalProviderOptions> = {}): FalProvider {
  return new FalProvider({
    name: "fal",
    url: fal.url,
    token: fal.token,
    model: ENDPOINT,
    allowLocalOutputs: true,
    scheduler: systemScheduler,
    clock: systemClock,
    pollMs: 10,
    ...overrides,
  });
}

async function job(input: Record<string, unknown> = { duration: "2s" }): Promise<ProviderJob> {
  const full = { prompt: "a dolly shot", image_urls: ["https://example.com/a.png"], ...input };
  const workDir = await mkdtemp(join(tmpdir(), "fal-provider-"));
  workDirs.push(workDir);
  return {
    runId: "run_fal",
    request: normalizeInput("lab-d/model-d/reference-to-video", full),
    input: full,
    workDir,
    references: [],
    maxDurationSeconds: 30,
  };
}

/**
 * A context that records what the provider reports, with an optional deadline from now. A test
 * whose run should finish gives a deadline of 50 s: the test's own 60 s timeout, not the
 * deadline, bounds a slow render on a busy machine.
 */
function context(options: { deadlineInMs?: number; upstream?: UpstreamJob } = {}) {
  const controller = new AbortController();
  const progress: number[] = [];
  const recorded: UpstreamJob[] = [];
  const ctx: ProviderContext = {
    signal: controller.signal,
    onProgress: (fraction) => progress.push(fraction),
    ...(options.deadlineInMs === undefined ? {} : { deadline: Date.now() + options.deadlineInMs }),
    upstream: options.upstream ?? null,
    recordUpstream: async (upstream) => {
      recorded.push(upstream);
    },
  };
  return { ctx, controller, progress, recorded };
}

/** Real time, except that every wait longer than 20 ms is cut to 20 ms and written down. */
function quickScheduler(): Scheduler & { waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    setTimeout: (fn, ms) => {
      waits.push(ms);
      return systemScheduler.setTimeout(fn, Math.min(ms, 20));
    },
  };
}

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const onlyJob = (upstream: UpstreamJob | undefined) => fal.stats.jobs.get(upstream?.id ?? "");

/** Contract runs: the slow prompt is a model that takes a minute, like the other providers' own. */
describeProviderContract(
  "FalProvider",
  async (): Promise<Provider> => {
    const inner = provider();
    return {
      usesReferences: inner.usesReferences,
      run: (j, ctx) => {
        fal.knobs.latencyMs = j.request.prompt === SLOW_PROMPT ? 60_000 : 60;
        return inner.run(j, ctx);
      },
    };
  },
  SLOW_PROMPT,
);

describe("FalProvider: one request, end to end", () => {
  it("passes on where the request stands in fal's queue, then that it left it", async () => {
    fal.knobs.latencyMs = 60;
    fal.knobs.queueMs = 600;
    try {
      const runs = await Promise.all(
        [0, 1, 2].map(async () => {
          const { ctx } = context({ deadlineInMs: 50_000 });
          const positions: (number | null)[] = [];
          ctx.onQueuePosition = (position) => positions.push(position);
          await provider().run(await job(), ctx);
          return positions;
        }),
      );
      // Each saw a position while queued (how many jobs were ahead), and null once it ran.
      for (const positions of runs) {
        expect(positions.some((p) => typeof p === "number" && p >= 0)).toBe(true);
        expect(positions.at(-1)).toBeNull();
      }
    } finally {
      fal.knobs.queueMs = KNOBS.queueMs as number;
    }
  });

  it("submits the mapped input once, records the request before it finishes, reports progress, and brings home the video", async () => {
    fal.knobs.latencyMs = 500; // long enough for several status polls, even on a busy machine
    const submits = fal.stats.submits;
    const events: string[] = [];
    const { ctx, progress, recorded } = context({ deadlineInMs: 50_000 });
    ctx.recordUpstream = async (upstream) => {
      recorded.push(upstream);
      events.push(`record while ${onlyJob(upstream)?.status}`);
    };
    ctx.onProgress = (fraction) => {
      progress.push(fraction);
      events.push("progress");
    };
    const j = await job({ duration: "3s" });
    const fal2 = provider({ mapping: { rename: { prompt: "text" }, input: { seed: 7 } } });

    const result = await fal2.run(j, ctx);

    expect(fal.stats.submits).toBe(submits + 1);
    expect(recorded).toHaveLength(1);
    const upstream = recorded[0] as UpstreamJob;
    expect(upstream.provider).toBe("fal");
    expect(onlyJob(upstream)?.input).toEqual({
      text: "a dolly shot",
      image_urls: ["https://example.com/a.png"],
      duration: "3s",
      seed: 7,
    });
    expect(upstream.urls).toEqual({
      status_url: `${fal.url}/fal-ai/refvid-test/requests/${upstream.id}/status`,
      response_url: `${fal.url}/fal-ai/refvid-test/requests/${upstream.id}`,
      cancel_url: `${fal.url}/fal-ai/refvid-test/requests/${upstream.id}/cancel`,
    });
    expect(events[0]).toMatch(/^record while IN_(QUEUE|PROGRESS)$/);

    expect(result.path.startsWith(j.workDir)).toBe(true);
    const probed = await probeDuration(result.path, { timeoutMs: 10_000 });
    expect(Math.abs(probed - 3)).toBeLessThan(0.1);
    expect(Math.abs(result.durationSeconds - probed)).toBeLessThan(0.05);

    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.some((f) => f > 0 && f < 1)).toBe(true);
    expect(progress.at(-1)).toBe(1);
    expect(onlyJob(upstream)).toMatchObject({ status: "COMPLETED", cancelled: false });
  });

  it("logs the request id when fal accepts it, and never the key", async () => {
    const lines: string[] = [];
    const logger = pino(
      { level: "debug" },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk));
          done();
        },
      }),
    );
    const { ctx, recorded } = context();
    await provider({ logger }).run(await job(), ctx);
    const accepted = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "fal accepted the request");
    expect(accepted).toMatchObject({ runId: "run_fal", upstreamId: recorded[0]?.id });
    expect(lines.join("\n")).not.toContain(fal.token);
  });
});

describe("FalProvider: resuming a request another worker started", () => {
  it("follows the recorded request to its video without submitting again", async () => {
    fal.knobs.latencyMs = 150;
    // The first worker dies right after recording the request: its run never goes on.
    let recorded: UpstreamJob | undefined;
    const first = context();
    first.ctx.recordUpstream = (upstream) => {
      recorded = upstream;
      return new Promise<void>(() => {});
    };
    void provider().run(await job(), first.ctx);
    await until(() => recorded !== undefined);
    const submits = fal.stats.submits;

    const second = context({ upstream: recorded as UpstreamJob });
    const result = await provider().run(await job(), second.ctx);

    expect(fal.stats.submits).toBe(submits);
    expect(second.recorded).toEqual([]);
    expect(await probeDuration(result.path, { timeoutMs: 10_000 })).toBeCloseTo(2, 0);
    expect(second.progress.at(-1)).toBe(1);
  });

  it("refuses a request recorded by another provider, and one missing its URLs, without submitting", async () => {
    const submits = fal.stats.submits;
    const urls = {
      status_url: `${fal.url}/x/status`,
      response_url: `${fal.url}/x`,
      cancel_url: `${fal.url}/x/c`,
    };
    const other = context({ upstream: { provider: "replicate", id: "x", urls } });
    await expect(provider().run(await job(), other.ctx)).rejects.toThrow(/belongs to replicate/);
    const partial = context({
      upstream: { provider: "fal", id: "x", urls: { status_url: urls.status_url } },
    });
    await expect(provider().run(await job(), partial.ctx)).rejects.toThrow(/no response_url/);
    const foreign = context({
      upstream: { provider: "fal", id: "x", urls: { ...urls, status_url: "https://elsewhere.example/x" } },
    });
    await expect(provider().run(await job(), foreign.ctx)).rejects.toThrow(/elsewhere\.example/);
    expect(fal.stats.submits).toBe(submits);
  });
});

describe("FalProvider: the model's failures", () => {
  it.each([
    ["a 500 model error", DEFAULT_FAILURE],
    [
      "a content policy refusal",
      { status: 422, type: "content_policy_violation", message: "Flagged by the safety checker." },
    ],
  ])(
    "a COMPLETED status carrying an error (%s) is a ProviderError with fal's message",
    async (_, failure) => {
      Object.assign(fal.knobs, { failNext: 1, failure });
      const { ctx, recorded } = context();
      const error = await provider()
        .run(await job(), ctx)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).message).toBe(failure.message);
      expect(recorded).toHaveLength(1);
      expect(onlyJob(recorded[0])?.cancelled).toBe(false);
    },
  );

  it("an error answer from response_url is a ProviderError with fal's message", async () => {
    // A status that reports success, and a result that is the model's error.
    const submitted = async () => {
      const { ctx, recorded } = context();
      await provider()
        .run(await job(), ctx)
        .catch(() => {});
      return recorded[0] as UpstreamJob;
    };
    const succeeded = await submitted();
    Object.assign(fal.knobs, {
      failNext: 1,
      failure: { status: 500, type: "generation_timeout", message: "Generation took too long." },
    });
    const failed = await submitted();
    const mixed = {
      ...succeeded,
      urls: { ...succeeded.urls, response_url: failed.urls.response_url as string },
    };
    const { ctx } = context({ upstream: mixed });
    const error = await provider()
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe("Generation took too long.");
  });

  it.each<[FalKnobs["malformedOutput"], RegExp]>([
    ["bad-url", /not a URL/],
    ["not-video", /not an MP4 or MOV/],
    ["no-video", /without a video/],
  ])("a malformed output (%s) is a ProviderError", async (malformed, message) => {
    fal.knobs.malformedOutput = malformed;
    const { ctx } = context();
    const error = await provider()
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as Error).message).toMatch(message);
  });
});

describe("FalProvider: an input the model refuses", () => {
  it("is a ProviderError naming each field in fal's words, the result read once and nothing retried", async () => {
    const { ctx, recorded } = context();
    const images = Array.from({ length: 10 }, (_, i) => `https://example.com/${i}.png`);
    const error = await provider({ model: SEEDANCE })
      .run(await job({ duration: 20, image_urls: images }), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toBe(
      "The model refused the input: duration: Input should be 'auto', '4', '5', '6', '7', '8', '9', '10', " +
        "'11', '12', '13', '14' or '15'; image_urls: Sequence should have at most 9 items",
    );
    // fal took the request (it checks nothing at submit); its result was asked for once.
    expect(recorded).toHaveLength(1);
    const id = recorded[0]?.id ?? "";
    const { requests } = fal.stats;
    expect(requests.filter((r) => r.kind === "submit").at(-1)?.body).toEqual({
      prompt: "a dolly shot",
      image_urls: images,
      duration: 20,
    });
    const results = requests.filter((r) => r.kind === "result" && r.path.endsWith(id));
    expect(results.map((r) => r.status)).toEqual([422]);
  });
});

describe("FalProvider: retries and deadlines", () => {
  it("retries 429 with Retry-After and 5xx bursts on submit, status and result, then succeeds with one request", async () => {
    Object.assign(fal.knobs, {
      retryAfterSeconds: 2,
      rateLimitNext: { submit: 1, status: 1 },
      serverErrorNext: { submit: 2, status: 2, result: 2 },
    });
    const scheduler = quickScheduler();
    const submits = fal.stats.submits;
    const { ctx, recorded } = context({ deadlineInMs: 50_000 });
    const result = await provider({ scheduler }).run(await job(), ctx);
    expect(await probeDuration(result.path, { timeoutMs: 10_000 })).toBeCloseTo(2, 0);
    expect(fal.stats.submits).toBe(submits + 1);
    expect(recorded).toHaveLength(1);
    // Each 429 waited the Retry-After it was given.
    expect(scheduler.waits.filter((ms) => ms >= 2_000)).toHaveLength(2);
    expect(fal.knobs.serverErrorNext).toEqual({ submit: 0, status: 0, result: 0 });
  });

  it("fails as a retryable submit failure when fal keeps answering 429 past the deadline, recording nothing", async () => {
    Object.assign(fal.knobs, { rateLimitNext: { submit: 1_000 }, retryAfterSeconds: 1 });
    const submits = fal.stats.submits;
    const { ctx, recorded } = context({ deadlineInMs: 500 });
    const started = Date.now();
    const error = await provider()
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendorError);
    expect(error).toMatchObject({ status: 429, retryable: true });
    expect((error as Error).message).toMatch(/^submit failed: fal answered 429/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(recorded).toEqual([]);
    expect(fal.stats.submits).toBe(submits);
  });

  it("fails with fal's 429 when status calls are limited past the deadline, and cancels the request", async () => {
    Object.assign(fal.knobs, { rateLimitNext: { status: 1_000 }, retryAfterSeconds: 1, latencyMs: 5_000 });
    const { ctx, recorded } = context({ deadlineInMs: 500 });
    const error = await provider()
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendorError);
    expect(error).toMatchObject({ status: 429, retryable: true });
    expect((error as Error).message).not.toMatch(/submit failed/);
    expect(recorded).toHaveLength(1);
    expect(onlyJob(recorded[0])).toMatchObject({ cancelled: true, status: "COMPLETED" });
  });

  it("abandons a status call that hangs when the deadline comes, and cancels the request", async () => {
    Object.assign(fal.knobs, { hangStatus: true, latencyMs: 5_000 });
    const { ctx, recorded } = context({ deadlineInMs: 300 });
    const started = Date.now();
    const error = await provider()
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(error).toBeInstanceOf(VendorError);
    expect((error as Error).message).toMatch(/no answer in time/);
    expect(onlyJob(recorded[0])?.cancelled).toBe(true);
  });

  it("gives up at the deadline on a request that is still running, and cancels it", async () => {
    fal.knobs.latencyMs = 60_000;
    // The provider's clock passes the deadline once the request is recorded (it runs at fal by
    // the first poll), so a submit slowed by a busy machine never meets the deadline first.
    let ahead = 0;
    const clock = { now: () => new Date(Date.now() + ahead) };
    const { ctx, recorded } = context({ deadlineInMs: 30_000 });
    ctx.recordUpstream = async (upstream) => {
      recorded.push(upstream);
      ahead = 60_000;
    };
    const error = await provider({ clock })
      .run(await job(), ctx)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VendorError);
    expect((error as Error).message).toMatch(/did not finish by the run's deadline/);
    expect(onlyJob(recorded[0])).toMatchObject({ cancelled: true, cancelledIn: "IN_PROGRESS" });
  });
});

describe("FalProvider: abort", () => {
  it("cancels the running request at fal and rethrows the signal's reason", async () => {
    fal.knobs.latencyMs = 60_000;
    const cancels = fal.stats.cancels;
    const { ctx, controller, recorded } = context();
    const running = provider().run(await job(), ctx);
    await until(() => onlyJob(recorded[0])?.status === "IN_PROGRESS");
    const reason = new Error("run cancelled");
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(fal.stats.cancels).toBe(cancels + 1);
    expect(onlyJob(recorded[0])).toMatchObject({ cancelled: true, cancelledIn: "IN_PROGRESS" });
  });

  it("abandons a hanging status call on abort, and cancels the request", async () => {
    Object.assign(fal.knobs, { hangStatus: true, latencyMs: 5_000 });
    const { ctx, controller, recorded } = context();
    const running = provider().run(await job(), ctx);
    await until(() => recorded.length === 1);
    const calls = fal.stats.statusCalls;
    await until(() => fal.stats.statusCalls > calls);
    const reason = new Error("run timed out");
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    expect(onlyJob(recorded[0])?.cancelled).toBe(true);
  });

  it("cancels the request when it cannot be recorded on the run, and passes the error on", async () => {
    fal.knobs.queueMs = 10_000;
    const { ctx } = context();
    const lost = new Error("store connection lost");
    let upstream: UpstreamJob | undefined;
    ctx.recordUpstream = async (job) => {
      upstream = job;
      throw lost;
    };
    await expect(provider().run(await job(), ctx)).rejects.toBe(lost);
    expect(onlyJob(upstream)).toMatchObject({ cancelled: true, cancelledIn: "IN_QUEUE" });
  });
});

describe("FalProvider: the key stays secret", () => {
  it("never puts the key in an error message, not even when fal echoes it", async () => {
    const messages: string[] = [];
    const failing = async (p: FalProvider) => {
      const error = await p.run(await job(), context().ctx).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      messages.push((error as Error).message);
      return error;
    };
    const unauthorized = await failing(provider({ token: `${fal.token}-revoked` }));
    expect(unauthorized).toMatchObject({ status: 401, retryable: false });
    expect((unauthorized as Error).message).toMatch(/^submit failed: fal answered 401/);
    const forbidden = await failing(provider({ token: fal.forbiddenToken }));
    expect(forbidden).toMatchObject({ status: 403 });
    Object.assign(fal.knobs, {
      failNext: 1,
      failure: { ...DEFAULT_FAILURE, message: `Rejected key ${fal.token}.` },
    });
    const echoed = await failing(provider());
    expect((echoed as Error).message).toBe("Rejected key [redacted].");
    for (const message of messages) {
      expect(message).not.toContain(fal.token);
      expect(message).not.toContain(fal.forbiddenToken);
    }
  });
});
