/**
 * Conformance of the local Replicate server: driven with plain `fetch` as Replicate's HTTP API
 * reference shows a client doing it (create on the official-model route or with `version`, poll
 * `urls.get`, cancel with `urls.cancel`, download the output), including every knob.
 */
import { createHmac } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../../src/media/ffmpeg.js";
import {
  type ReplicateServer,
  type ReplicateServerOptions,
  startReplicateServer,
} from "./replicate-server.js";
import { type Prediction, replicateClient, TERMINAL } from "./replicate-test-client.js";
import { until } from "./until.js";
import { vendorInputSchema } from "./vendor-schemas.js";

/** The pattern replicate-javascript's `parseProgressFromLogs` reads. */
const TQDM = /^\s*(\d+)%\s*\|.+?\|\s*(\d+)\/(\d+)/;

let server: ReplicateServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "replicate-conformance-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await server?.close();
});

async function start(options: ReplicateServerOptions = {}): Promise<ReplicateServer> {
  server = await startReplicateServer(options);
  return server;
}

const { headers, create, createWithVersion, created, get, cancel, settle } = replicateClient(() => server);

async function downloadedSeconds(url: string): Promise<number> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("video/mp4");
  const file = join(dir, `${Math.random().toString(36).slice(2)}.mp4`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return probeDuration(file, { timeoutMs: 10_000 });
}

describe("happy path", () => {
  it("creates on the official-model route, reports tqdm progress while processing, and serves a real MP4", async () => {
    // Long enough processing to be seen with its progress on a busy machine.
    await start({ knobs: { queueMs: 30, latencyMs: 600, progressSteps: 4, outputSeconds: 2 } });
    const input = { prompt: "a fox in the snow", duration: 5, image: "https://example.com/fox.png" };
    const first = await created({ input });
    expect(first).toMatchObject({
      model: server.model,
      version: "hidden",
      input,
      status: "starting",
      output: null,
      error: null,
      logs: "",
      data_removed: false,
      started_at: null,
      completed_at: null,
      urls: {
        get: `${server.url}/v1/predictions/${first.id}`,
        cancel: `${server.url}/v1/predictions/${first.id}/cancel`,
      },
    });
    expect(first.id).toMatch(/^[0-9a-z]{26}$/);
    expect(Date.parse(first.created_at)).not.toBeNaN();

    const running = await until(async () => {
      const now = await get(first);
      return now.status === "processing" && now.logs.split("\n").some((line) => TQDM.test(line))
        ? now
        : undefined;
    });
    expect(running.started_at).not.toBeNull();
    expect(running.output).toBeNull();

    const done = await settle(first);
    expect(done.status).toBe("succeeded");
    expect(done.logs).toContain("100%|██████████| 4/4");
    expect(done.metrics.predict_time).toBeGreaterThan(0);
    expect(done.metrics.total_time).toBeGreaterThanOrEqual(done.metrics.predict_time ?? 0);
    expect(typeof done.output).toBe("string");
    expect(done.output as string).toMatch(new RegExp(`^${server.url}/.+\\.mp4$`));
    // replicate.delivery URLs are public: no Authorization header.
    expect(await downloadedSeconds(done.output as string)).toBeCloseTo(2, 0);

    expect(server.stats.submits).toBe(1);
    expect(server.stats.predictions.get(first.id)).toMatchObject({
      route: "model",
      input,
      status: "succeeded",
      canceled: false,
      cancelRequests: 0,
    });
  });

  it("makes the video as long as input.duration asks when outputSeconds is not set", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20 } });
    const done = await settle(await created({ input: { prompt: "p", duration: 3 } }));
    expect(await downloadedSeconds(done.output as string)).toBeCloseTo(3, 0);
  });

  it("serves byte ranges of the output", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, outputSeconds: 1 } });
    const done = await settle(await created());
    const res = await fetch(done.output as string, { headers: { range: "bytes=0-7" } });
    expect(res.status).toBe(206);
    expect(res.headers.get("content-range")).toMatch(/^bytes 0-7\/\d+$/);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(4, 8)
        .toString("latin1"),
    ).toBe("ftyp");
  });

  it("accepts POST /v1/predictions with the version as owner/name, owner/name:id or id", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20 } });
    const cases: [string, string][] = [
      [server.model, "hidden"],
      [`${server.model}:${server.versionId}`, server.versionId],
      [server.versionId, server.versionId],
    ];
    for (const [version, shown] of cases) {
      const res = await createWithVersion({ version, input: { prompt: "p" } });
      expect(res.status).toBe(201);
      const body = (await res.json()) as Prediction;
      expect(body.version).toBe(shown);
      expect(server.stats.predictions.get(body.id)?.route).toBe("version");
    }
    const wrong = await createWithVersion({ version: "someone/else:abc", input: { prompt: "p" } });
    expect(wrong.status).toBe(422);
    expect(await wrong.json()).toMatchObject({ title: "Invalid version or not permitted", status: 422 });
    const missing = await createWithVersion({ input: { prompt: "p" } });
    expect(missing.status).toBe(422);
    expect(await missing.json()).toMatchObject({ invalid_fields: [{ field: "version" }] });
    expect(server.stats.submits).toBe(3);
  });

  it("gives the output as a list of URLs with outputShape list", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, outputShape: "list", outputSeconds: 1 } });
    const done = await settle(await created());
    expect(Array.isArray(done.output)).toBe(true);
    const [url] = done.output as string[];
    expect(await downloadedSeconds(url as string)).toBeCloseTo(1, 0);
  });

  it("has no idempotency: the same request twice makes two predictions, both listed", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20 } });
    const a = await created();
    const b = await created();
    expect(a.id).not.toBe(b.id);
    expect(server.stats.submits).toBe(2);
    const res = await fetch(`${server.url}/v1/predictions`, { headers: headers() });
    const page = (await res.json()) as { next: null; results: Prediction[] };
    expect(page.results.map((p) => p.id).sort()).toEqual([a.id, b.id].sort());
  });
});

describe("sync mode (Prefer: wait)", () => {
  it("holds the request until the prediction ends and answers 201 with the output", async () => {
    await start({ secondMs: 100, knobs: { queueMs: 10, latencyMs: 40 } });
    const res = await create(undefined, { prefer: "wait" });
    expect(res.status).toBe(201);
    const body = (await res.json()) as Prediction;
    expect(body.status).toBe("succeeded");
    expect(typeof body.output).toBe("string");
    expect(res.headers.get("location")).toBe(body.urls.get);
    expect(server.stats.predictions.get(body.id)?.preferWaitSeconds).toBe(60);
  });

  it("answers 202 with the prediction as it stands once wait=N seconds pass", async () => {
    await start({ secondMs: 100, knobs: { queueMs: 0, latencyMs: 10_000 } });
    const res = await create(undefined, { prefer: "wait=1" });
    expect(res.status).toBe(202);
    const body = (await res.json()) as Prediction;
    expect(["starting", "processing"]).toContain(body.status);
    expect(body.output).toBeNull();
    expect(res.headers.get("location")).toBe(body.urls.get);
  });

  it("keeps the prediction running when the waiting client hangs up", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 1_000 } });
    // The client hangs up once the server holds its request (a timer could fire before it arrives).
    const hangUp = new AbortController();
    const waiting = fetch(`${server.url}/v1/models/${server.model}/predictions`, {
      method: "POST",
      headers: headers({ prefer: "wait=60" }),
      body: JSON.stringify({ input: { prompt: "p" } }),
      signal: hangUp.signal,
    });
    await until(() => (server.stats.submits === 1 ? true : undefined));
    hangUp.abort();
    await expect(waiting).rejects.toThrow();
    const [stat] = [...server.stats.predictions.values()];
    await until(() => (stat?.status === "succeeded" ? true : undefined));
  });
});

describe("cancel", () => {
  it("cancels a starting prediction: canceled, never started", async () => {
    await start({ knobs: { queueMs: 10_000 } });
    const p = await created();
    const res = await cancel(p);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "canceled", started_at: null, output: null });
    expect((await get(p)).completed_at).not.toBeNull();
    expect(server.stats.cancels).toBe(1);
    expect(server.stats.predictions.get(p.id)).toMatchObject({ status: "canceled", canceled: true });
  });

  it("cancels a processing prediction", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 10_000 } });
    const p = await created();
    await until(async () => ((await get(p)).status === "processing" ? true : undefined));
    const body = (await (await cancel(p)).json()) as Prediction;
    expect(body).toMatchObject({ status: "canceled", output: null });
    expect(body.started_at).not.toBeNull();
    expect(body.metrics.predict_time).toBeGreaterThanOrEqual(0);
  });

  it("answers a finished prediction as it is", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20 } });
    const done = await settle(await created());
    const res = await cancel(done);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "succeeded", output: done.output });
    expect(server.stats.predictions.get(done.id)).toMatchObject({ canceled: false, cancelRequests: 1 });
  });

  it("answers 404 for an unknown prediction", async () => {
    await start();
    const res = await fetch(`${server.url}/v1/predictions/nosuchprediction/cancel`, {
      method: "POST",
      headers: headers(),
    });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual({ title: "Not found", detail: "Not found.", status: 404 });
  });
});

describe("Cancel-After deadline", () => {
  it("aborts a prediction still starting at its deadline", async () => {
    await start({ secondMs: 20, knobs: { queueMs: 10_000 } });
    const p = await created(undefined, { "cancel-after": "5s" });
    expect(Date.parse(p.deadline ?? "")).toBeGreaterThan(Date.parse(p.created_at));
    expect((await settle(p)).status).toBe("aborted");
  });

  it("cancels a running prediction at its deadline", async () => {
    await start({ secondMs: 20, knobs: { queueMs: 0, latencyMs: 10_000 } });
    const done = await settle(await created(undefined, { "cancel-after": "5" }));
    expect(done.status).toBe("canceled");
    expect(done.started_at).not.toBeNull();
    expect(server.stats.predictions.get(done.id)?.canceled).toBe(false);
  });

  it.each(["1s", "soon", ""])("rejects Cancel-After %j", async (value) => {
    await start();
    const res = await create(undefined, { "cancel-after": value });
    expect(res.status).toBe(400);
    expect(server.stats.submits).toBe(0);
  });
});

describe("failures", () => {
  it("failNext ends the next prediction failed with an error message, then runs normally", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, failNext: 1, failMessage: "NSFW content detected" } });
    const failed = await settle(await created());
    expect(failed).toMatchObject({ status: "failed", output: null, error: "NSFW content detected" });
    expect(failed.logs).toContain("NSFW content detected");
    expect((await settle(await created())).status).toBe("succeeded");
  });

  it("abortNext ends the next prediction aborted before it starts", async () => {
    await start({ knobs: { queueMs: 10, abortNext: 1 } });
    const aborted = await settle(await created());
    expect(aborted).toMatchObject({ status: "aborted", started_at: null, output: null });
    expect(server.stats.predictions.get(aborted.id)?.status).toBe("aborted");
  });

  it.each([
    ["not-a-url", (output: unknown) => expect(() => new URL(output as string)).toThrow()],
    ["null", (output: unknown) => expect(output).toBeNull()],
    ["empty-list", (output: unknown) => expect(output).toEqual([])],
  ] as const)("malformedOutput %s", async (kind, check) => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, malformedOutput: kind } });
    const done = await settle(await created());
    expect(done.status).toBe("succeeded");
    check(done.output);
  });

  it("malformedOutput not-a-video serves bytes labelled video/mp4 that are no video", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, malformedOutput: "not-a-video" } });
    const done = await settle(await created());
    await expect(downloadedSeconds(done.output as string)).rejects.toThrow();
  });

  it("removes input, output and files once dataRetentionMs has passed", async () => {
    await start({ knobs: { queueMs: 0, latencyMs: 20, outputSeconds: 1 } });
    const done = await settle(await created());
    expect(done.data_removed).toBe(false);
    server.knobs.dataRetentionMs = 0;
    expect(await get(done)).toMatchObject({
      status: "succeeded",
      data_removed: true,
      output: null,
      input: {},
    });
    expect((await fetch(done.output as string)).status).toBe(404);
  });
});

describe("rate limits, server errors and hangs", () => {
  it("rateLimitNext on submits answers 429 with Retry-After and creates nothing", async () => {
    await start({ knobs: { rateLimitNext: 1, rateLimitKind: "submit", retryAfterSeconds: 3 } });
    const res = await create();
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(await res.json()).toEqual({
      title: "Request was throttled.",
      detail: "Request was throttled. Expected available in 3 seconds.",
      status: 429,
      retry_after: 3,
    });
    expect(server.stats).toMatchObject({ submits: 0, submitAttempts: 1 });
    await created();
    expect(server.stats.submits).toBe(1);
  });

  it("rateLimitNext on status calls leaves creates alone", async () => {
    await start({ knobs: { rateLimitNext: 1, rateLimitKind: "status" } });
    const p = await created();
    const limited = await fetch(p.urls.get, { headers: headers() });
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await get(p)).id).toBe(p.id);
    expect(server.stats.statusCalls).toBe(2);
  });

  it("serverErrorNext answers 500 problem details, or a gateway's HTML 503", async () => {
    await start({ knobs: { serverErrorNext: 1 } });
    const res = await create();
    expect(res.status).toBe(500);
    expect(await res.json()).toMatchObject({ status: 500, title: "Internal Server Error" });
    expect(server.stats.submits).toBe(0);
    const p = await created();

    server.knobs.serverErrorNext = 1;
    server.knobs.serverErrorKind = "status";
    server.knobs.serverErrorStatus = 503;
    const gateway = await fetch(p.urls.get, { headers: headers() });
    expect(gateway.status).toBe(503);
    expect(gateway.headers.get("content-type")).toBe("text/html");
    expect((await get(p)).id).toBe(p.id);
  });

  it("hangStatus holds status calls until cleared, or until the client gives up", async () => {
    await start();
    const p = await created();
    server.knobs.hangStatus = true;
    await expect(
      fetch(p.urls.get, { headers: headers(), signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow();
    const calls = server.stats.statusCalls;
    const pending = fetch(p.urls.get, { headers: headers() });
    await until(() => (server.stats.statusCalls > calls ? true : undefined));
    server.knobs.hangStatus = false;
    expect((await pending).status).toBe(200);
  });
});

describe("authentication and bad requests", () => {
  it("answers 401 problem details without a token and with a wrong one", async () => {
    await start();
    const bare = await fetch(`${server.url}/v1/models/${server.model}/predictions`, {
      method: "POST",
      body: JSON.stringify({ input: { prompt: "p" } }),
    });
    expect(bare.status).toBe(401);
    expect(bare.headers.get("content-type")).toBe("application/problem+json");
    expect(await bare.json()).toEqual({
      title: "Unauthenticated",
      detail: "You did not pass an authentication token",
      status: 401,
    });
    const wrong = await create(undefined, { authorization: "Bearer r8_wrong" });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ detail: "You did not pass a valid authentication token" });
    const p = await created();
    const unauthorizedPoll = await fetch(p.urls.get);
    expect(unauthorizedPoll.status).toBe(401);
    expect(server.stats.submits).toBe(1);
  });

  it("accepts the older Token scheme", async () => {
    await start();
    expect((await create(undefined, { authorization: `Token ${server.token}` })).status).toBe(201);
  });

  it.each([
    ["no prompt", { input: {} }, "input.prompt"],
    ["no input", {}, "input"],
    ["duration out of range", { input: { prompt: "p", duration: 0 } }, "input.duration"],
    ["an unknown field", { input: { prompt: "p" }, webhook_completed: "https://x" }, "webhook_completed"],
    ["a bad webhook", { input: { prompt: "p" }, webhook: "not a url" }, "webhook"],
    [
      "an unknown event",
      { input: { prompt: "p" }, webhook_events_filter: ["done"] },
      "webhook_events_filter",
    ],
  ])("answers 422 for %s, naming the field", async (_name, body, field) => {
    await start();
    const res = await create(body);
    expect(res.status).toBe(422);
    const problem = (await res.json()) as { title: string; invalid_fields: { field: string }[] };
    expect(problem.title).toBe("Input validation failed");
    expect(problem.invalid_fields.map((f) => f.field)).toContain(field);
    expect(server.stats.submits).toBe(0);
  });

  it("answers 400 for a body that is not JSON and 404 for an unknown model", async () => {
    await start();
    const res = await fetch(`${server.url}/v1/models/${server.model}/predictions`, {
      method: "POST",
      headers: headers(),
      body: "{not json",
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      status: 400,
      detail: expect.stringContaining("JSON parse error"),
    });
    const unknown = await fetch(`${server.url}/v1/models/nobody/nothing/predictions`, {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({ input: { prompt: "p" } }),
    });
    expect(unknown.status).toBe(404);
  });
});

describe("webhooks", () => {
  let receiver: Server;
  let hooks: { headers: IncomingHttpHeaders; body: string; answered: number }[];
  let failFirstCompleted: boolean;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      req.on("end", () => {
        const completed = TERMINAL.includes((JSON.parse(body) as Prediction).status);
        const answered = completed && failFirstCompleted ? 500 : 204;
        if (completed) failFirstCompleted = false;
        hooks.push({ headers: req.headers, body, answered });
        res.writeHead(answered).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => receiver.close(resolve));
  });

  it("sends the filtered events signed with the account's secret, retrying the final one", async () => {
    hooks = [];
    failFirstCompleted = true;
    await start({ webhookRetryDelaysMs: [20, 20], knobs: { queueMs: 20, latencyMs: 60 } });
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook?run=1`;
    const p = await created({
      input: { prompt: "p" },
      webhook: hookUrl,
      webhook_events_filter: ["start", "completed"],
    });
    await until(() =>
      hooks.some((h) => h.answered === 204 && h.body.includes('"succeeded"')) ? true : undefined,
    );

    const res = await fetch(`${server.url}/v1/webhooks/default/secret`, { headers: headers() });
    const { key } = (await res.json()) as { key: string };
    expect(key).toMatch(/^whsec_/);
    const secret = Buffer.from(key.split("_").pop() as string, "base64");
    for (const hook of hooks) {
      const id = hook.headers["webhook-id"] as string;
      const timestamp = hook.headers["webhook-timestamp"] as string;
      const expected = createHmac("sha256", secret)
        .update(`${id}.${timestamp}.${hook.body}`)
        .digest("base64");
      expect(hook.headers["webhook-signature"]).toBe(`v1,${expected}`);
      expect((JSON.parse(hook.body) as Prediction).id).toBe(p.id);
    }

    const statuses = hooks.map((h) => (JSON.parse(h.body) as Prediction).status);
    expect(statuses).toEqual(["starting", "succeeded", "succeeded"]);
    const [, failedAttempt, retry] = hooks;
    expect(failedAttempt?.answered).toBe(500);
    expect(retry?.headers["webhook-id"]).toBe(failedAttempt?.headers["webhook-id"]);
    expect(retry?.body).toBe(failedAttempt?.body);
    await expect
      .poll(() => server.stats.webhooks.map((w) => [w.event, w.attempt, w.responseStatus]), {
        timeout: 10_000,
      })
      .toEqual([
        ["start", 1, 204],
        ["completed", 1, 500],
        ["completed", 2, 204],
      ]);
  });
});

describe("an input the model's schema refuses", () => {
  const MODEL = "bytedance/seedance-2.0";
  const schema = () => vendorInputSchema("replicate", MODEL);
  const images = (n: number) => Array.from({ length: n }, (_, i) => `https://x/${i}.png`);

  it("a valid input is created, including 10 reference images: the published schema sets no limit", async () => {
    await start({ model: MODEL, inputSchemas: { [MODEL]: schema() } });
    const p = await created({ input: { prompt: "p", duration: -1, reference_images: images(10) } });
    expect(p.input).toEqual({ prompt: "p", duration: -1, reference_images: images(10) });
  });

  it.each<[string, Record<string, unknown>, { type: string; field: string; description: string }[]]>([
    [
      "a duration past 15",
      { prompt: "p", duration: 20 },
      [{ type: "number_lte", field: "input.duration", description: "Must be less than or equal to 15" }],
    ],
    ["no prompt", { duration: 5 }, [{ type: "required", field: "input", description: "prompt is required" }]],
    [
      "a duration of the wrong type",
      { prompt: "p", duration: "5" },
      [
        {
          type: "invalid_type",
          field: "input.duration",
          description: "Invalid type. Expected: integer, given: string",
        },
      ],
    ],
    [
      "a reference that is not a string",
      { prompt: "p", reference_images: ["https://x/a.png", 7] },
      [
        {
          type: "invalid_type",
          field: "input.reference_images.1",
          description: "Invalid type. Expected: string, given: integer",
        },
      ],
    ],
  ])("%s: 422 Input validation failed, naming the field, and no prediction", async (_, input, fields) => {
    await start({ model: MODEL, inputSchemas: { [MODEL]: schema() } });
    const res = await create({ input });
    expect(res.status).toBe(422);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toEqual({
      title: "Input validation failed",
      status: 422,
      detail: fields.map((f) => `- ${f.field}: ${f.description}`).join("\n"),
      invalid_fields: fields,
    });
    expect(server.stats.submits).toBe(0);
    expect(server.stats.requests).toEqual([
      {
        method: "POST",
        path: `/v1/models/${MODEL}/predictions`,
        kind: "submit",
        status: 422,
        body: { input },
      },
    ]);
  });

  it("a schema keyed by version id checks creates on the version route too", async () => {
    await start({ model: MODEL, versionId: "d456b64a", inputSchemas: { d456b64a: schema() } });
    const res = await createWithVersion({ version: "d456b64a", input: { prompt: "p", duration: 16 } });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { invalid_fields: unknown[] }).invalid_fields).toEqual([
      { type: "number_lte", field: "input.duration", description: "Must be less than or equal to 15" },
    ]);
  });
});
