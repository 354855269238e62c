/**
 * CogProvider with vendor webhooks on: async predictions (`Prefer: respond-async`) whose end comes
 * by webhook, against the local Cog container (test/vendors/cog-server.ts) and a webhook receiver
 * standing for refvid's (it reads each webhook with the provider's `readHook` and keeps what it
 * says to keep, as services/vendor-hooks.ts does). One prediction per run through lost answers, a
 * resumed run, a run taken over after its prediction ended unheard; cancel, refused records,
 * failures, a box that answers synchronously, and a webhook that never arrives.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as wait } from "node:timers/promises";
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
  startBox,
} from "../../test/vendors/cog-adapter.js";
import type { CogFlavor, CogServer, CogServerOptions } from "../../test/vendors/cog-server.js";
import { probeDuration } from "../media/ffmpeg.js";
import type { CogProvider } from "./cog.js";
import { cogBoxes } from "./cog-box.js";
import { LeaveUpstreamRunning, ProviderError, type VendorLogKind, type VendorSide } from "./types.js";
import { VendorError } from "./upstream/vendor-http.js";

const FLAVORS: CogFlavor[] = ["coglet", "python"];

afterEach(closeBoxes);
afterAll(removeWorkDirs);

/** A box whose webhooks retry quickly. */
const cog = (options: CogServerOptions = {}) =>
  startBox({ ...options, knobs: { webhookRetryBaseMs: 5, ...options.knobs } });

interface Hook {
  upstreamId: string;
  status: string | null;
  payload: string | null;
}

/**
 * A run's vendor side with webhooks on: a receiver that reads each webhook with `cogProvider`'s
 * `readHook` and keeps it (answering `refuse` instead while that is set), and the run's vendor log.
 */
async function hookedVendor(cogProvider: CogProvider) {
  const hooks: Hook[] = [];
  const entries: { kind: VendorLogKind; upstreamId: string | null; detail: string | null }[] = [];
  const control: { refuse: number | null } = { refuse: null };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (control.refuse !== null) return res.writeHead(control.refuse).end();
      const body = Buffer.concat(chunks);
      void cogProvider.readHook({ headers: {}, body }).then((said) => {
        hooks.push({ ...said, payload: said.keep ? body.toString("utf8") : null });
        res.writeHead(200).end();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const vendor: VendorSide = {
    hookUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    backstopMs: 30_000,
    // The follow pauses a poll interval (10 ms here): no need to end a pause early.
    pause: (ms, signal) => wait(ms, false, { signal }),
    hooks: async () => hooks.map(({ upstreamId, status }) => ({ upstreamId, status })),
    hookPayload: async (upstreamId, status) =>
      hooks.filter((hook) => hook.upstreamId === upstreamId && hook.status === status).at(-1)?.payload ??
      null,
    heldByAnotherRun: async () => false,
    log: async (kind, upstreamId, detail) => {
      entries.push({ kind, upstreamId, detail });
    },
  };
  return { vendor, hooks, entries, control, kinds: () => entries.map((entry) => entry.kind) };
}

/** The box's requests that carried a model's input (probes carry `input: []`). */
const creates = (server: CogServer) =>
  server.stats.requests.filter(
    (r) => r.method === "PUT" && !Array.isArray((r.body as { input?: unknown } | null)?.input),
  );

/** An async prediction a worker made before it died: the box has it, nobody follows it. */
async function madeByADeadWorker(server: CogServer, id: string, hookUrl: string | null): Promise<void> {
  const answer = await fetch(`${server.url}/predictions/${id}`, {
    method: "PUT",
    headers: { "content-type": "application/json", prefer: "respond-async" },
    body: JSON.stringify({
      input: { prompt: "a dolly shot" },
      webhook: hookUrl,
      webhook_events_filter: ["start", "completed"],
    }),
  });
  expect(answer.status).toBe(202);
}

describe("an async prediction", () => {
  it.each(FLAVORS)(
    "%s: one model run, made with Prefer and the run's webhook, its end read from the webhook",
    async (flavor) => {
      const server = await cog({ knobs: { flavor, latencyMs: 200 } });
      const cogProvider = provider(server.url);
      const hooked = await hookedVendor(cogProvider);
      const j = await job();
      const { ctx, progress, recorded } = context(server, { vendor: hooked.vendor });
      const result = await cogProvider.run(j, ctx);

      expect(await probeDuration(result.path, { timeoutMs: 10_000 })).toBeCloseTo(2, 1);
      expect(server.jobsFor(j.runId)).toMatchObject([
        { via: "PUT", async: true, status: "succeeded", webhook: hooked.vendor.hookUrl },
      ]);
      expect(creates(server)).toHaveLength(1);
      expect(creates(server)[0]?.body).toMatchObject({ webhook_events_filter: ["start", "completed"] });
      expect(recorded.map((r) => r.upstream)).toEqual([{ provider: NAME, id: j.runId, urls: {} }]);
      expect(hooked.hooks.at(-1)).toMatchObject({ upstreamId: j.runId, status: "succeeded" });
      expect(hooked.hooks.filter((hook) => hook.payload !== null)).toHaveLength(1);
      expect(hooked.entries).toEqual([]);
      expect(progress.at(-1)).toBe(1);
      // coglet shows the prediction's logs to a probe: progress along the way.
      if (flavor === "coglet") expect(progress.some((f) => f > 0 && f < 1)).toBe(true);
    },
  );

  it.each(FLAVORS)("%s: the model failing is a ProviderError with its message", async (flavor) => {
    const server = await cog({ knobs: { flavor, failNext: 1, failMessage: "CUDA out of memory" } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const err = await rejection(cogProvider.run(await job(), context(server, { vendor: hooked.vendor }).ctx));
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as Error).message).toBe("CUDA out of memory");
  });
});

describe("a lost answer: the prediction is found and adopted, never made twice", () => {
  it.each<[CogFlavor, "drop" | "502", "starting" | "processing" | "end"]>([
    ["coglet", "drop", "starting"],
    ["coglet", "502", "processing"],
    ["coglet", "drop", "end"],
    ["python", "drop", "starting"],
    ["python", "502", "end"],
  ])("%s, lost (%s) at %s", async (flavor, as, at) => {
    const server = await cog({
      knobs: { flavor, queueMs: 50, latencyMs: 300, loseAnswerNext: 1, loseAnswerAs: as, loseAnswerAt: at },
    });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    const { ctx, recorded } = context(server, { vendor: hooked.vendor });
    const result = await cogProvider.run(j, ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(server.jobsFor(j.runId)).toMatchObject([
      { async: true, answerLost: true, status: "succeeded", paid: true, cancelled: false },
    ]);
    // No PUT with the input after the lost one (a dropped answer is not in the server's log).
    expect(creates(server)).toHaveLength(as === "drop" ? 0 : 1);
    expect(server.stats.submits).toBe(1);
    expect(recorded).toHaveLength(1);
    expect(hooked.kinds()).toEqual(["create_unanswered", "adopted"]);
  });

  it.each(FLAVORS)(
    "%s: a PUT that never reached the box (a gateway's 502): no sign within the grace, made once",
    async (flavor) => {
      const server = await cog({
        knobs: { flavor, serverErrorNext: { submit: 1 }, serverErrorStatus: 502 },
      });
      const cogProvider = provider(server.url, { lostGraceMs: 150 });
      const hooked = await hookedVendor(cogProvider);
      const j = await job();
      await cogProvider.run(j, context(server, { vendor: hooked.vendor }).ctx);
      expect(server.jobsFor(j.runId)).toMatchObject([{ async: true, status: "succeeded" }]);
      expect(hooked.kinds()).toEqual(["create_unanswered", "uncertain", "created_again"]);
      expect(hooked.entries[2]?.detail).toBe("no sign of the lost prediction");
    },
  );
});

describe("resuming, and taking a run over", () => {
  it.each(FLAVORS)("%s: a prediction still in flight is followed, never made again", async (flavor) => {
    const server = await cog({ knobs: { flavor, latencyMs: 500 } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    await madeByADeadWorker(server, j.runId, hooked.vendor.hookUrl);
    const upstream = { provider: NAME, id: j.runId, urls: {} };
    const { ctx, recorded } = context(server, { vendor: hooked.vendor, upstream });
    const result = await cogProvider.run(j, ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(server.jobsFor(j.runId)).toMatchObject([
      { status: "succeeded", input: { prompt: "a dolly shot" } },
    ]);
    expect(creates(server)).toHaveLength(1);
    expect(recorded).toEqual([]);
  });

  it.each<[string, boolean]>([
    ["resumed (the run recorded it)", true],
    ["taken over (its worker died before recording it)", false],
  ])(
    "a prediction that ended while no worker listened, %s: its kept webhook has the end, no PUT",
    async (_, recordedBefore) => {
      const server = await cog();
      const cogProvider = provider(server.url);
      const hooked = await hookedVendor(cogProvider);
      const j = await job();
      await madeByADeadWorker(server, j.runId, hooked.vendor.hookUrl);
      await eventually(() => hooked.hooks.find((hook) => hook.status === "succeeded"));
      const requestsBefore = server.stats.requests.length;
      const upstream = recordedBefore ? { provider: NAME, id: j.runId, urls: {} } : null;
      const { ctx, recorded } = context(server, { vendor: hooked.vendor, upstream });
      const result = await cogProvider.run(j, ctx);
      expect(result.durationSeconds).toBeCloseTo(2, 1);
      expect(server.stats.requests.slice(requestsBefore)).toEqual([]);
      expect(server.jobsFor(j.runId)).toHaveLength(1);
      expect(recorded).toHaveLength(recordedBefore ? 0 : 1);
    },
  );

  it("coglet: a recorded prediction cancelled on the box (none in flight, its end `canceled`) is made again", async () => {
    const server = await cog({ knobs: { latencyMs: 5_000 } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    await madeByADeadWorker(server, j.runId, hooked.vendor.hookUrl);
    await fetch(`${server.url}/predictions/${j.runId}/cancel`, { method: "POST" });
    await eventually(() => hooked.hooks.find((hook) => hook.status === "canceled"));
    server.knobs.latencyMs = 80;
    const upstream = { provider: NAME, id: j.runId, urls: {} };
    await cogProvider.run(j, context(server, { vendor: hooked.vendor, upstream }).ctx);
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "canceled" }, { status: "succeeded" }]);
    expect(hooked.kinds()).toEqual(["created_again"]);
  });
});

describe("stopping", () => {
  /** A run whose async prediction the model runs now. */
  async function running(server: CogServer) {
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    const { ctx, controller } = context(server, { vendor: hooked.vendor });
    const run = cogProvider.run(j, ctx);
    await eventually(() => server.jobsFor(j.runId)[0]?.status === "processing");
    return { j, run, controller };
  }

  it.each<CogFlavor>(["coglet", "python", "python-0.12"])(
    "%s: an abort cancels the prediction (Cog 0.12 too: an async one leaves its server free)",
    async (flavor) => {
      const server = await cog({ knobs: { flavor, latencyMs: 60_000 } });
      const { j, run, controller } = await running(server);
      const reason = new Error("run cancelled");
      controller.abort(reason);
      expect(await rejection(run)).toBe(reason);
      await eventually(() => server.jobsFor(j.runId)[0]?.status === "canceled");
      expect(server.stats.cancels).toBe(1);
      expect(cogBoxes.busy(server.url)).toBe(false);
    },
  );

  it.each(FLAVORS)("%s: an abort that leaves the job running cancels nothing", async (flavor) => {
    const server = await cog({ knobs: { flavor, latencyMs: 300 } });
    const { j, run, controller } = await running(server);
    const reason = new LeaveUpstreamRunning("worker shutting down");
    controller.abort(reason);
    expect(await rejection(run)).toBe(reason);
    await eventually(() => server.jobsFor(j.runId)[0]?.status === "succeeded");
    expect(server.stats.cancels).toBe(0);
  });

  it("a refused record (the lease is gone) leaves the prediction to whoever holds the run", async () => {
    const server = await cog({ knobs: { latencyMs: 300 } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    const lost = new Error("the run's lease is gone");
    const { ctx } = context(server, { vendor: hooked.vendor, recordUpstream: () => Promise.reject(lost) });
    expect(await rejection(cogProvider.run(j, ctx))).toBe(lost);
    await eventually(() => hooked.hooks.find((hook) => hook.status === "succeeded"));
    expect(server.stats.cancels).toBe(0);
    // The next holder of the run finds its end and makes nothing.
    const next = await cogProvider.run(j, context(server, { vendor: hooked.vendor }).ctx);
    expect(next.durationSeconds).toBeCloseTo(2, 1);
    expect(server.jobsFor(j.runId)).toHaveLength(1);
  });

  it("a model still running at the deadline is cancelled", async () => {
    const server = await cog({ knobs: { latencyMs: 30_000 } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const j = await job();
    // Long enough for the prediction to be taken and recorded first on a busy machine.
    const { ctx } = context(server, { vendor: hooked.vendor, deadline: Date.now() + 2_000 });
    const err = await rejection(cogProvider.run(j, ctx));
    expect(err).toBeInstanceOf(VendorError);
    expect((err as Error).message).toContain("had not ended by the run's deadline");
    await eventually(() => server.jobsFor(j.runId)[0]?.status === "canceled");
  });
});

describe("when async does not work", () => {
  it("a box that answers an async create when it ended (Prefer dropped): taken, then held requests", async () => {
    const server = await cog({ knobs: { preferDropped: true } });
    const cogProvider = provider(server.url);
    const hooked = await hookedVendor(cogProvider);
    const first = await job();
    const result = await cogProvider.run(first, context(server, { vendor: hooked.vendor }).ctx);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    expect(cogBoxes.answersSync(server.url)).toEqual(expect.any(Date));
    const second = await job();
    await cogProvider.run(second, context(server, { vendor: hooked.vendor }).ctx);
    expect(server.jobsFor(first.runId)).toMatchObject([{ async: false, status: "succeeded" }]);
    expect(server.jobsFor(second.runId)).toMatchObject([{ async: false, status: "succeeded" }]);
    expect(creates(server)[1]?.body).toMatchObject({ webhook_events_filter: ["completed"] });
  });

  it("coglet: a prediction that ended with no webhook reaching refvid fails the run, never made again", async () => {
    const server = await cog();
    const cogProvider = provider(server.url, { adoptWindowMs: 200 });
    const hooked = await hookedVendor(cogProvider);
    hooked.control.refuse = 404;
    const j = await job();
    const err = await rejection(cogProvider.run(j, context(server, { vendor: hooked.vendor }).ctx));
    expect(err).toBeInstanceOf(VendorError);
    expect((err as Error).message).toContain("check that the box reaches REFVID_PUBLIC_URL");
    expect(server.jobsFor(j.runId)).toMatchObject([{ status: "succeeded" }]);
  });
});
