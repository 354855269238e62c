/**
 * CogProvider against the local Cog container (test/vendors/cog-server.ts) over real HTTP, in both
 * server generations (coglet and Cog ≤ 0.16), with vendor webhooks off: the Provider contract, the
 * held prediction (one model run, record, progress, output), a dropped request, a lost answer and a
 * resumed run (never two predictions at once), the model's failures, busy and not-ready
 * containers, retries, deadlines, cancel, the proxy credential, and the health check. Async
 * predictions (vendor webhooks on) are in cog-async.test.ts.
 */
import { randomUUID } from "node:crypto";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { setTimeout as wait } from "node:timers/promises";
import pino from "pino";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  closeBoxes,
  closers,
  runContext as context,
  eventually,
  cogJob as job,
  NAME,
  cogProvider as provider,
  rejection,
  removeWorkDirs,
  SCHEMA,
  startBox,
} from "../../test/vendors/cog-adapter.js";
import {
  type CogFlavor,
  type CogHealth,
  type CogServer,
  type CogServerOptions,
  startCogServer,
} from "../../test/vendors/cog-server.js";
import { vendorInputSchema } from "../../test/vendors/vendor-schemas.js";
import { probeDuration } from "../media/ffmpeg.js";
import { ProviderFull } from "../worker/stops.js";
import type { CogProviderOptions } from "./cog.js";
import { cogBoxes } from "./cog-box.js";
import { cogHealth } from "./cog-health.js";
import { describeProviderContract } from "./provider.contract.js";
import {
  LeaveUpstreamRunning,
  ProviderError,
  type ProviderJob,
  type UpstreamJob,
  type VendorLogKind,
  type VendorSide,
} from "./types.js";
import { VendorError } from "./upstream/vendor-http.js";

const SLOW_PROMPT = "a slow, very long take";
const FLAVORS: CogFlavor[] = ["coglet", "python"];

afterEach(closeBoxes);
afterAll(removeWorkDirs);
const cog = startBox;

/** A run the provider started, once the model runs its prediction. */
async function runningPrediction(server: CogServer, overrides: Partial<CogProviderOptions> = {}) {
  const j = await job();
  const { ctx, controller } = context(server);
  const running = provider(server.url, overrides).run(j, ctx);
  await eventually(() => server.jobsFor(j.runId)[0]?.status === "processing");
  return { j, running, controller };
}

/**
 * A sync PUT of a prediction from a worker that then dies: the connection drops once the model
 * runs, and nobody ever reads the answer.
 */
async function diedHolding(server: CogServer, id: string): Promise<void> {
  const req = request(`${server.url}/predictions/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
  });
  req.on("error", () => {});
  req.end(JSON.stringify({ input: { prompt: "first worker" } }));
  await eventually(() => server.jobsFor(id)[0]?.status === "processing");
  req.destroy();
}

/** Starts a prediction of another run that keeps Cog's only slot busy for `ms`. */
async function occupy(server: CogServer, ms: number): Promise<string> {
  const latency = server.knobs.latencyMs;
  server.knobs.latencyMs = ms;
  const id = `other_${randomUUID()}`;
  const answer = await fetch(`${server.url}/predictions/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({ input: { prompt: "another run" } }),
  });
  expect(answer.status).toBe(202);
  server.knobs.latencyMs = latency;
  return id;
}

/** A run's vendor side with webhooks off, keeping its vendor log. */
function vendorLog() {
  const entries: { kind: VendorLogKind; upstreamId: string | null; detail: string | null }[] = [];
  const vendor: VendorSide = {
    hookUrl: null,
    pause: (ms, signal) => wait(ms, false, { signal }),
    hooks: async () => [],
    hookPayload: async () => null,
    heldByAnotherRun: async () => false,
    backstopMs: 30_000,
    log: async (kind, upstreamId, detail) => {
      entries.push({ kind, upstreamId, detail });
    },
  };
  return { vendor, entries, kinds: () => entries.map((e) => e.kind) };
}

interface Seen {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
}

/**
 * A proxy in front of Cog that wants `Bearer <token>` (401 otherwise), keeps every request it
 * saw, and can drop the next PUT's connection after `dropNextPutAfterMs` (both sides, as a proxy
 * restart would).
 */
async function proxy(target: CogServer, token: string) {
  const seen: Seen[] = [];
  const control: { dropNextPutAfterMs: number | null } = { dropNextPutAfterMs: null };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const authorization = req.headers.authorization;
      seen.push({ method: req.method ?? "", path: req.url ?? "", authorization, body });
      if (authorization !== `Bearer ${token}`) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"detail":"Unauthorized"}');
        return;
      }
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.authorization;
      const upstream = request(`${target.url}${req.url}`, { method: req.method, headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
      const drop = control.dropNextPutAfterMs;
      if (req.method === "PUT" && drop !== null) {
        control.dropNextPutAfterMs = null;
        setTimeout(() => {
          upstream.destroy();
          res.destroy();
        }, drop);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, control };
}

function logCapture() {
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
  return { logger, text: () => lines.join("") };
}

// --- The Provider contract --------------------------------------------------------------------

let shared: CogServer | null = null;
afterAll(async () => {
  await shared?.close();
});

describeProviderContract(
  "CogProvider",
  async () => {
    shared ??= await startCogServer({ input: SCHEMA, knobs: { latencyMs: 40 } });
    const server = shared;
    const cogProvider = provider(server.url);
    // The container's model makes what the run asks for; the slow prompt keeps it busy.
    return {
      usesReferences: cogProvider.usesReferences,
      run(j, ctx) {
        server.knobs.outputSeconds = j.request.duration === "auto" ? 2 : j.request.duration;
        server.knobs.latencyMs = j.request.prompt === SLOW_PROMPT ? 60_000 : 40;
        return cogProvider.run(j, ctx);
      },
    };
  },
  SLOW_PROMPT,
);

// --- A prediction from start to end -----------------------------------------------------------

describe("a prediction", () => {
  it.each<[CogFlavor, "data" | "url"]>([
    ["coglet", "data"],
    ["coglet", "url"],
    ["python", "data"],
  ])(
    "%s, output as %s: one model run, recorded while it runs, its video probed",
    async (flavor, outputAs) => {
      // The model does not end until the prediction is recorded: on a busy machine the record may
      // come after a 200 ms model's end, and this test is about the record coming while it runs.
      const server = await cog({
        knobs: { flavor, outputAs, latencyMs: 200, outputSeconds: 2, holdEnd: true },
      });
      const j = await job();
      const { ctx, progress, recorded } = context(server);
      const running = provider(server.url).run(j, ctx);
      await eventually(() => recorded.length > 0, 30_000);
      server.knobs.holdEnd = false;
      const result = await running;

      expect(result.path.startsWith(j.workDir)).toBe(true);
      expect(await probeDuration(result.path, { timeoutMs: 10_000 })).toBeCloseTo(2, 1);
      expect(result.durationSeconds).toBeCloseTo(2, 1);
      expect(server.stats.submits).toBe(1);
      expect(server.jobsFor(j.runId)).toMatchObject([
        { via: "PUT", async: false, status: "succeeded", input: { prompt: "a dolly shot" } },
      ]);
      expect(recorded).toEqual([
        {
          upstream: { provider: NAME, id: j.runId, urls: {} },
          statusThen: expect.stringMatching(/starting|processing/),
        },
      ]);
      expect(progress.at(-1)).toBe(1);
      expect([...progress].sort((a, b) => a - b)).toEqual(progress);
      if (flavor === "coglet") {
        // coglet shows the prediction's logs to a probe: progress along the way.
        expect(progress.some((f) => f > 0 && f < 1)).toBe(true);
        expect(server.stats.statusCalls).toBeGreaterThan(0);
      }
    },
  );

  it("never PUTs a valid input twice: probes carry an input no model takes", async () => {
    const server = await cog({ knobs: { latencyMs: 150 } });
    const front = await proxy(server, "t0ken-for-the-proxy");
    const j = await job();
    await provider(front.url, { token: "t0ken-for-the-proxy" }).run(j, context(server).ctx);
    const puts = front.seen.filter((s) => s.method === "PUT");
    expect(puts.length).toBeGreaterThan(1);
    expect(JSON.parse(puts[0]?.body ?? "{}").input).toMatchObject({ prompt: "a dolly shot" });
    for (const probe of puts.slice(1)) expect(JSON.parse(probe.body)).toEqual({ input: [] });
    expect(server.jobsFor(j.runId)).toHaveLength(1);
  });

  it("sends the route's renames and fixed fields as the model's input", async () => {
    const server = await cog();
    const j = await job();
    const cogProvider = provider(server.url, {
      mapping: { rename: { image_urls: "images" }, input: { num_frames: 96 } },
    });
    await cogProvider.run(j, context(server).ctx);
    expect(server.jobsFor(j.runId)[0]?.input).toEqual({
      prompt: "a dolly shot",
      images: ["https://example.com/a.png"],
      num_frames: 96,
    });
  });

  it.each(FLAVORS)("%s: the model failing is a ProviderError with its message", async (flavor) => {
    const server = await cog({ knobs: { flavor, failNext: 1, failMessage: "CUDA out of memory" } });
    const { ctx, recorded } = context(server);
    const err = await rejection(provider(server.url).run(await job(), ctx));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe("CUDA out of memory");
    expect(recorded).toHaveLength(1);
  });

  it.each(FLAVORS)("%s: input the model refuses is a ProviderError naming the field", async (flavor) => {
    const server = await cog({ knobs: { flavor } });
    const { ctx, recorded } = context(server);
    const cogProvider = provider(server.url, { mapping: { rename: { prompt: "text" } } });
    const err = await rejection(cogProvider.run(await job(), ctx));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe("The model refused the input: prompt: Field required");
    expect(server.stats.submits).toBe(0);
    expect(recorded).toEqual([]);
  });

  it.each(FLAVORS)(
    "%s: input the model's published schema refuses names every field in Cog's words, sent once",
    async (flavor) => {
      const inputSchema = vendorInputSchema("replicate", "bytedance/seedance-2.0");
      const server = await cog({ inputSchema, knobs: { flavor } });
      const { ctx, recorded } = context(server);
      const cogProvider = provider(server.url, {
        mapping: { rename: { image_urls: "reference_images" }, asNumber: ["duration"] },
        // Never taken for being held long on a busy machine: the refusal is all this test is about.
        acceptAfterMs: 60_000,
      });
      const j = await job({ duration: "20s", seed: 1.5 });
      const err = await rejection(cogProvider.run(j, ctx));
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as Error).message).toBe(
        "The model refused the input: duration: 20 is greater than the maximum of 15; " +
          'seed: 1.5 is not of type "integer"',
      );
      // Probes (an input no model takes) aside, the input went once.
      const sent = server.stats.requests.filter(
        (r) => !Array.isArray((r.body as { input?: unknown })?.input),
      );
      expect(sent).toEqual([
        {
          method: "PUT",
          path: `/predictions/${j.runId}`,
          kind: "submit",
          status: 422,
          body: {
            input: {
              prompt: "a dolly shot",
              reference_images: ["https://example.com/a.png"],
              duration: 20,
              seed: 1.5,
            },
          },
        },
      ]);
      expect(server.stats.submits).toBe(0);
      expect(recorded).toEqual([]);
    },
  );

  it.each(["url", "data"] as const)(
    "an output that is not a video (%s) is a ProviderError",
    async (outputAs) => {
      const server = await cog({ knobs: { outputAs, malformedOutput: true } });
      const err = await rejection(provider(server.url).run(await job(), context(server).ctx));
      expect(err).toBeInstanceOf(ProviderError);
      expect((err as Error).message).toMatch(/not an MP4|cannot be read/);
    },
  );
});

// --- Busy, not ready, retries and deadlines ---------------------------------------------------

describe("a container that is busy, starting or failing", () => {
  it.each(FLAVORS)("%s: waits while every slot is busy (409), then runs once", async (flavor) => {
    const server = await cog({ knobs: { flavor } });
    await occupy(server, 150);
    const j = await job();
    const { ctx, recorded } = context(server);
    const result = await provider(server.url).run(j, ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(server.stats.conflicts).toBeGreaterThan(0);
    expect(server.jobsFor(j.runId)).toHaveLength(1);
    expect(recorded).toHaveLength(1);
  });

  it.each(FLAVORS)("%s: waits while the model sets up (503 / 409), then runs once", async (flavor) => {
    const server = await cog({ setupMs: 120, knobs: { flavor } });
    const j = await job();
    await provider(server.url).run(j, context(server).ctx);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "succeeded" }]);
  });

  it("honours a proxy's 429 Retry-After, and retries a 5xx burst, on the prediction request", async () => {
    const server = await cog({ knobs: { rateLimitNext: { submit: 1 }, retryAfterSeconds: 1 } });
    const started = Date.now();
    await provider(server.url).run(await job(), context(server).ctx);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);

    server.knobs.serverErrorNext = { submit: 3 };
    server.knobs.serverErrorStatus = 502;
    const j = await job();
    await provider(server.url).run(j, context(server).ctx);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "succeeded" }]);
    expect(server.stats.submits).toBe(2);
  });

  it("keeps going through 429s and 5xx on probes: the held request carries the result", async () => {
    const server = await cog({
      knobs: {
        latencyMs: 250,
        retryAfterSeconds: 0,
        rateLimitNext: { status: 2 },
        serverErrorNext: { status: 2 },
      },
    });
    const { ctx, progress, recorded } = context(server);
    await provider(server.url).run(await job(), ctx);
    expect(server.knobs.rateLimitNext.status).toBe(0);
    expect(server.knobs.serverErrorNext.status).toBe(0);
    expect(progress.some((f) => f > 0 && f < 1)).toBe(true);
    expect(recorded).toHaveLength(1);
    expect(server.stats.submits).toBe(1);
  });

  it.each<[string, CogServerOptions["knobs"]]>([
    ["a proxy answering 429", { rateLimitNext: { submit: 1_000 }, retryAfterSeconds: 0 }],
    ["a model that never sets up (503)", { health: "SETUP_FAILED" }],
  ])(
    "gives up at the deadline with %s: a retryable VendorError saying the submit failed",
    async (_, knobs) => {
      const server = await cog({ knobs });
      const { ctx, recorded } = context(server, { deadline: Date.now() + 150 });
      const err = await rejection(provider(server.url).run(await job(), ctx));
      expect(err).toBeInstanceOf(VendorError);
      expect((err as VendorError).message).toMatch(/^submit failed: /);
      expect((err as VendorError).retryable).toBe(true);
      expect(recorded).toEqual([]);
      expect(server.stats.submits).toBe(0);
    },
  );

  it("gives up at the deadline while every slot stays busy: 409, never taken", async () => {
    const server = await cog();
    await occupy(server, 5_000);
    const { ctx, recorded } = context(server, { deadline: Date.now() + 150 });
    const err = await rejection(provider(server.url).run(await job(), ctx));
    expect(err).toMatchObject({ retryable: true, message: expect.stringMatching(/^submit failed: /) });
    // The last try before the deadline is a 409, or, on a busy machine, one cut off by the deadline.
    expect([409, null]).toContain((err as VendorError).status);
    expect(recorded).toEqual([]);
    expect(server.stats.conflicts).toBeGreaterThan(0);
  });

  it("a model still running at the deadline is cancelled (probes hanging meanwhile)", async () => {
    const server = await cog({ knobs: { latencyMs: 30_000, hangStatus: true } });
    const j = await job();
    // Long enough for the prediction to be taken and recorded first on a busy machine.
    const { ctx, recorded } = context(server, { deadline: Date.now() + 2_000 });
    const err = await rejection(provider(server.url).run(j, ctx));
    expect(err).toBeInstanceOf(VendorError);
    expect((err as Error).message).toContain("had not ended by the run's deadline");
    expect(recorded).toHaveLength(1);
    expect(server.stats.statusCalls).toBeGreaterThan(0);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled", cancelled: true }]);
  });

  it("a hanging probe does not hold the result up", async () => {
    const server = await cog({ knobs: { latencyMs: 200, hangStatus: true } });
    const j = await job();
    const result = await provider(server.url).run(j, context(server).ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(server.stats.statusCalls).toBeGreaterThan(0);
    expect(server.stats.submits).toBe(1);
  });
});

// --- Cancel, lost connections and resuming ----------------------------------------------------

describe("cancel and resume", () => {
  it.each(FLAVORS)("%s: an abort cancels the prediction and rethrows the reason", async (flavor) => {
    const server = await cog({ knobs: { flavor, latencyMs: 5_000 } });
    const { j, running, controller } = await runningPrediction(server);
    const reason = new Error("run cancelled");
    const started = Date.now();
    controller.abort(reason);
    expect(await rejection(running)).toBe(reason);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(server.stats.cancels).toBe(1);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled", cancelled: true }]);
  });

  it.each<[CogFlavor, string]>([
    ["coglet", "canceled"],
    ["python", "processing"],
  ])(
    "%s: an abort that leaves the job running only drops the request (the prediction is %s)",
    async (flavor, status) => {
      const server = await cog({ knobs: { flavor, latencyMs: 5_000 } });
      const { j, running, controller } = await runningPrediction(server);
      const reason = new LeaveUpstreamRunning("worker shutting down");
      controller.abort(reason);
      expect(await rejection(running)).toBe(reason);
      await eventually(() => server.jobsFor(j.runId)[0]?.status === status);
      expect(server.stats.cancels).toBe(0);
    },
  );

  it("an abort while a probe hangs still ends the run at once", async () => {
    const server = await cog({ knobs: { latencyMs: 5_000, hangStatus: true } });
    const j = await job();
    const { ctx, controller } = context(server);
    const running = provider(server.url).run(j, ctx);
    await eventually(() => server.stats.statusCalls > 0);
    const reason = new Error("timed out");
    controller.abort(reason);
    expect(await rejection(running)).toBe(reason);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled", cancelled: true }]);
  });

  it.each(FLAVORS)(
    "%s: a dropped held request: the prediction is started again, never beside the first",
    async (flavor) => {
      const server = await cog({ knobs: { flavor, latencyMs: 250 } });
      const front = await proxy(server, "t0ken");
      front.control.dropNextPutAfterMs = 60;
      const j = await job();
      const result = await provider(front.url, { token: "t0ken" }).run(j, context(server).ctx);
      expect(result.durationSeconds).toBeCloseTo(2, 1);
      // coglet cancels a sync prediction whose request dropped; Cog ≤ 0.16 lets it run, so it is cancelled.
      expect(server.jobsFor(j.runId)).toMatchObject([
        { status: "canceled", cancelled: true },
        { status: "succeeded", cancelled: false },
      ]);
    },
  );

  it.each(FLAVORS)(
    "%s: resuming after a worker died: no second prediction while the first runs",
    async (flavor) => {
      const server = await cog({ knobs: { flavor, latencyMs: 2_000 } });
      const j = await job();
      await diedHolding(server, j.runId);
      server.knobs.latencyMs = 80;
      const upstream: UpstreamJob = { provider: NAME, id: j.runId, urls: {} };
      const { ctx, recorded } = context(server, { upstream });
      const result = await provider(server.url).run(j, ctx);
      expect(result.durationSeconds).toBeCloseTo(2, 1);
      expect(recorded).toEqual([]);
      // The dead worker's prediction could not be read by anyone: it was cancelled (by coglet when its
      // request dropped, by the resuming worker on Cog ≤ 0.16) before the one that delivered began.
      const [first, second] = server.jobsFor(j.runId);
      expect(first).toMatchObject({ status: "canceled", cancelled: true, input: { prompt: "first worker" } });
      expect(second).toMatchObject({ status: "succeeded", input: { prompt: "a dolly shot" } });
      expect(server.stats.submits).toBe(2);
    },
  );

  it("a worker that cannot record the job (its lease is gone) cancels the prediction", async () => {
    const server = await cog({ knobs: { latencyMs: 5_000 } });
    const j = await job();
    const lost = new Error("the run's lease is gone");
    const { ctx } = context(server, { recordUpstream: () => Promise.reject(lost) });
    expect(await rejection(provider(server.url).run(j, ctx))).toBe(lost);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled", cancelled: true }]);
  });

  it("refuses to resume another provider's vendor job", async () => {
    const server = await cog();
    const j = await job();
    const { ctx } = context(server, { upstream: { provider: "fal", id: "abc", urls: {} } });
    const err = await rejection(provider(server.url).run(j, ctx));
    expect(err).toMatchObject({ retryable: false, message: expect.stringContaining("belongs to fal") });
    expect(server.stats.submits).toBe(0);
  });
});

describe("a lost answer (the held request dropped, or a gateway's 502)", () => {
  /** A run on `server` whose next create loses its answer `at`, `as`; its result and vendor log. */
  async function lostOnce(
    server: CogServer,
    at: CogServerOptions["knobs"] & object,
  ): Promise<{ j: ProviderJob; kinds: VendorLogKind[]; entries: ReturnType<typeof vendorLog>["entries"] }> {
    Object.assign(server.knobs, { loseAnswerNext: 1, ...at });
    const j = await job();
    const log = vendorLog();
    const result = await provider(server.url).run(j, context(server, { vendor: log.vendor }).ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(server.knobs.loseAnswerNext).toBe(0);
    return { j, kinds: log.kinds(), entries: log.entries };
  }

  it.each(["drop", "502"] as const)(
    "coglet, lost (%s) while starting: caught before its model ran, cancelled, created again; one paid",
    async (as) => {
      // coglet keeps it in flight until the cancel lands: the adapter's probe finds it still `starting`.
      const server = await cog({ knobs: { queueMs: 100, cancelLatencyMs: 1_000 } });
      const { j, kinds, entries } = await lostOnce(server, { loseAnswerAs: as, loseAnswerAt: "starting" });
      expect(server.jobsFor(j.runId)).toMatchObject([
        { answerLost: true, status: "canceled", cancelledIn: "starting", paid: false },
        { answerLost: false, status: "succeeded", paid: true },
      ]);
      expect(kinds).toEqual(["create_unanswered", "created_again"]);
      expect(entries[1]).toMatchObject({
        upstreamId: j.runId,
        detail: expect.stringContaining("before its model ran"),
      });
    },
  );

  it.each<[string, "processing" | "end"]>([
    ["once its model runs", "processing"],
    ["at its end", "end"],
  ])(
    "coglet, lost %s: its output reaches no one; created again, two paid, the log says so",
    async (_, at) => {
      const server = await cog({ knobs: { latencyMs: 1_500, cancelLatencyMs: 1_000 } });
      const { j, kinds, entries } = await lostOnce(server, { loseAnswerAs: "drop", loseAnswerAt: at });
      expect(server.jobsFor(j.runId)).toMatchObject([
        { answerLost: true, paid: true, status: at === "end" ? "succeeded" : "canceled" },
        { answerLost: false, paid: true, status: "succeeded" },
      ]);
      expect(kinds).toEqual(["create_unanswered", "uncertain", "created_again"]);
      if (at === "processing") expect(entries[1]?.detail).toContain("two predictions of the run ran");
    },
  );

  it("python (Cog ≤ 0.16): the lost prediction runs on, so it is cancelled before the next starts", async () => {
    const server = await cog({ knobs: { flavor: "python", latencyMs: 300 } });
    const { j, kinds } = await lostOnce(server, { loseAnswerAs: "drop", loseAnswerAt: "starting" });
    expect(server.jobsFor(j.runId)).toMatchObject([
      { answerLost: true, paid: true, status: "canceled", cancelled: true },
      { answerLost: false, paid: true, status: "succeeded" },
    ]);
    expect(server.stats.maxRunning).toBe(1);
    expect(kinds).toEqual(["create_unanswered", "uncertain", "created_again"]);
  });

  it("a request that never went out (connection refused) is not a lost answer", async () => {
    const server = await cog();
    const url = server.url;
    await server.close();
    const log = vendorLog();
    const { ctx } = context(null, { vendor: log.vendor, deadline: Date.now() + 300 });
    const err = await rejection(provider(url).run(await job(), ctx));
    expect(err).toMatchObject({ retryable: true, message: expect.stringMatching(/^submit failed: /) });
    expect(log.entries).toEqual([]);
  });
});

describe("a Cog server that ignores cancel of a held prediction (like Cog 0.12)", () => {
  it("the box is busy with the prediction until it ends: no new one meanwhile, uncancellable once refused", async () => {
    const server = await cog({ knobs: { flavor: "python-0.12", latencyMs: 60_000 } });
    const box = provider(server.url, { slot: "gpu-slots" });
    const first = await job();
    const { ctx, controller } = context(server);
    const running = box.run(first, ctx);
    await eventually(() => server.jobsFor(first.runId)[0]);
    const reason = new Error("run cancelled");
    controller.abort(reason);
    // Left on the box at once, before Cog was heard: another run waits in the queue.
    expect(cogBoxes.busy(server.url)).toBe(true);
    const waiting = await rejection(box.run(await job(), context(server).ctx));
    expect(waiting).toBeInstanceOf(ProviderFull);
    expect(waiting).toMatchObject({ provider: "gpu-slots" });
    // Cog 0.12 serves no cancel while the held prediction runs: unanswered, so uncancellable.
    expect(await rejection(running)).toBe(reason);
    expect(cogBoxes.uncancellable(server.url)).toEqual({
      predictionId: first.runId,
      since: expect.any(Date),
    });
    expect(server.stats.submits).toBe(1);

    server.finishNow(first.runId);
    await eventually(() => !cogBoxes.busy(server.url));
    expect(cogBoxes.uncancellable(server.url)).toBeNull();
    server.knobs.latencyMs = 80;
    const second = await job();
    expect((await box.run(second, context(server).ctx)).durationSeconds).toBeCloseTo(2, 1);
    expect(server.jobsFor(first.runId)).toMatchObject([{ status: "succeeded", cancelled: false }]);
    expect(server.stats).toMatchObject({ submits: 2, maxRunning: 1 });
  });

  it("a cancel Cog accepts but the model outlasts the grace: uncancellable until it ends", async () => {
    const server = await cog({ knobs: { latencyMs: 60_000, cancelLatencyMs: 600 } });
    const { j, running, controller } = await runningPrediction(server, { cancelGraceMs: 50 });
    controller.abort(new Error("run cancelled"));
    await rejection(running);
    expect(server.stats.cancels).toBe(1);
    await eventually(() => cogBoxes.uncancellable(server.url)?.predictionId === j.runId);
    await eventually(() => server.jobsFor(j.runId)[0]?.status === "canceled");
    await eventually(() => !cogBoxes.busy(server.url));
    expect(cogBoxes.uncancellable(server.url)).toBeNull();
  });

  it("coglet: a cancel that fails drops the held request, so coglet cancels; the box is free once READY", async () => {
    const server = await cog({ knobs: { latencyMs: 60_000, serverErrorNext: { cancel: 1 } } });
    const { j, running, controller } = await runningPrediction(server);
    controller.abort(new Error("run cancelled"));
    await rejection(running);
    expect(server.stats.cancels).toBe(0);
    await eventually(() => server.jobsFor(j.runId)[0]?.status === "canceled");
    await eventually(() => !cogBoxes.busy(server.url));
    expect(server.stats.submits).toBe(1);
  });

  it.each(FLAVORS)("%s: a cancel honoured in time leaves nothing on the box", async (flavor) => {
    const server = await cog({ knobs: { flavor, latencyMs: 60_000 } });
    const { j, running, controller } = await runningPrediction(server);
    controller.abort(new Error("run cancelled"));
    await rejection(running);
    await eventually(() => !cogBoxes.busy(server.url));
    expect(cogBoxes.uncancellable(server.url)).toBeNull();
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled" }]);
  });
});

// --- Credential -------------------------------------------------------------------------------

describe("the proxy credential", () => {
  const TOKEN = "cog-proxy-s3cret-token";

  it("is sent as Bearer on every call, and appears in no error and no log line", async () => {
    const server = await cog({ knobs: { latencyMs: 150 } });
    const front = await proxy(server, TOKEN);
    const logs = logCapture();
    const cogProvider = provider(front.url, { token: TOKEN, logger: logs.logger });

    const j = await job();
    await cogProvider.run(j, context(server).ctx);
    server.knobs.failNext = 1;
    server.knobs.failMessage = `leaked ${TOKEN}`;
    const failed = await rejection(cogProvider.run(await job(), context(server).ctx));
    server.knobs.rateLimitNext = { submit: 1_000 };
    server.knobs.retryAfterSeconds = 0;
    const limited = await rejection(
      cogProvider.run(await job(), context(server, { deadline: Date.now() + 200 }).ctx),
    );
    server.knobs.rateLimitNext = {};
    // A run stopped with a PUT in flight marks the box busy until the box says it is free. The
    // provider's box is the proxy's URL, the one it calls.
    await eventually(() => !cogBoxes.busy(front.url), 30_000);
    server.knobs.latencyMs = 5_000;
    const aborted = context(server);
    const slow = await job();
    const running = cogProvider.run(slow, aborted.ctx);
    await eventually(() => server.jobsFor(slow.runId)[0]?.status === "processing");
    aborted.controller.abort(new Error("stop"));
    await rejection(running);

    expect(front.seen.every((s) => s.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(front.seen.some((s) => s.method === "POST" && s.path.endsWith("/cancel"))).toBe(true);
    for (const err of [failed, limited]) expect(String((err as Error).message)).not.toContain(TOKEN);
    expect((failed as Error).message).toBe("leaked [redacted]");
    expect(logs.text()).toContain(j.runId);
    expect(logs.text()).not.toContain(TOKEN);
  });

  it("a credential the proxy refuses: the submit failed, not retried", async () => {
    const server = await cog();
    const front = await proxy(server, TOKEN);
    const { ctx, recorded } = context(server);
    const err = await rejection(provider(front.url, { token: "wrong-token" }).run(await job(), ctx));
    expect(err).toMatchObject({
      status: 401,
      retryable: false,
      message: expect.stringMatching(/^submit failed: /),
    });
    expect((err as Error).message).not.toContain("wrong-token");
    expect(front.seen).toHaveLength(1);
    expect(recorded).toEqual([]);
  });
});

// --- Health -----------------------------------------------------------------------------------

describe("cogHealth", () => {
  it.each<[CogHealth, boolean, string | undefined]>([
    ["READY", true, undefined],
    ["STARTING", false, undefined],
    ["SETUP_FAILED", false, "RuntimeError: weights not found"],
    ["DEFUNCT", false, undefined],
    ["UNHEALTHY", false, "healthcheck returned False"],
  ])("reports %s", async (health, ok, detail) => {
    const server = await cog({ knobs: { health } });
    const report = await cogHealth(server.url);
    expect(report).toEqual({
      ok,
      status: health,
      version: "0.17.0",
      coglet: true,
      ...(detail ? { detail } : {}),
    });
  });

  it("reports BUSY (ok) while every slot runs, and Cog ≤ 0.16 without a version", async () => {
    const server = await cog({ knobs: { flavor: "python" } });
    expect(await cogHealth(server.url)).toEqual({ ok: true, status: "READY" });
    await occupy(server, 2_000);
    expect(await cogHealth(server.url)).toEqual({ ok: true, status: "BUSY" });
  });

  it("reports a container that does not answer in time, or at all, as UNREACHABLE", async () => {
    const server = await cog({ knobs: { hangHealth: true } });
    const hung = await cogHealth(server.url, { timeoutMs: 100 });
    expect(hung).toMatchObject({
      ok: false,
      status: "UNREACHABLE",
      detail: expect.stringContaining("no answer"),
      unanswered: true,
    });
    const url = server.url;
    await server.close(); // closed again after the test: a no-op
    const gone = await cogHealth(url);
    expect(gone).toMatchObject({ ok: false, status: "UNREACHABLE" });
    expect(gone.unanswered).toBeUndefined();
  });
});
