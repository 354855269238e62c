/**
 * Conformance of the local fal queue API: driven with plain `fetch` the way fal's docs and clients
 * call it (submit to the endpoint id, then follow status_url / response_url / cancel_url).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { probeDuration } from "../../src/media/ffmpeg.js";
import { type FalKnobs, type FalServer, startFalServer } from "./fal-server.js";
import { falClient, type StatusBody, type Submitted } from "./fal-test-client.js";
import { vendorInputSchema } from "./vendor-schemas.js";

const ENDPOINT = "fal-ai/refvid-test/reference-to-video";
const NAMESPACED = "workflows/acme/storyboard/render/final";
/** An endpoint with its published input schema. */
const SEEDANCE = "bytedance/seedance-2.0/reference-to-video";

let fal: FalServer;
let dir: string;
const defaults: Partial<FalKnobs> = { queueMs: 0, latencyMs: 0 };

beforeAll(async () => {
  fal = await startFalServer({
    endpoints: [ENDPOINT, NAMESPACED, SEEDANCE],
    knobs: defaults,
    inputSchemas: { [SEEDANCE]: vendorInputSchema("fal", SEEDANCE) },
  });
  dir = await mkdtemp(join(tmpdir(), "fal-server-test-"));
});
afterAll(async () => {
  await fal.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  Object.assign(fal.knobs, {
    ...defaults,
    failNext: 0,
    rateLimitNext: {},
    serverErrorNext: {},
    hangStatus: false,
    malformedOutput: false,
    outputSeconds: null,
    honourCancel: true,
  });
});

const { key, submit, submitted, status, pollUntil, completed } = falClient(() => fal, ENDPOINT);

async function downloadedSeconds(videoUrl: string, name: string): Promise<number> {
  const res = await fetch(videoUrl);
  expect(res.status).toBe(200);
  const path = join(dir, name);
  await writeFile(path, Buffer.from(await res.arrayBuffer()));
  return probeDuration(path, { timeoutMs: 10_000 });
}

describe("fal queue: happy path", () => {
  it("queues, runs with progress logs, completes, and serves a playable MP4 of the requested length", async () => {
    // Queued and running long enough to be seen in each state on a busy machine.
    Object.assign(fal.knobs, { queueMs: 1_000, latencyMs: 300 });
    const before = fal.stats.submits;
    const res = await submit({ prompt: "a dolly shot", duration: "1", image_urls: ["https://x/y.png"] });
    expect(res.status).toBe(200);
    const job = (await res.json()) as Submitted;
    expect(res.headers.get("x-fal-request-id")).toBe(job.request_id);
    const base = `${fal.url}/fal-ai/refvid-test/requests/${job.request_id}`;
    expect(job).toEqual({
      status: "IN_QUEUE",
      request_id: job.request_id,
      response_url: base,
      status_url: `${base}/status`,
      cancel_url: `${base}/cancel`,
      queue_position: 0,
    });

    const seen = await completed(job);
    const states = seen.map((s) => `${s.code} ${s.body.status}`);
    expect(states[0]).toBe("202 IN_QUEUE");
    expect(states).toContain("202 IN_PROGRESS");
    expect(states.at(-1)).toBe("200 COMPLETED");
    expect(seen[0]?.body.queue_position).toBe(0);
    const done = seen.at(-1)?.body as StatusBody;
    expect(done.error).toBeUndefined();
    expect(done.metrics?.inference_time).toBeCloseTo(0.3, 2);
    expect(done.logs?.map((l) => l.message.trim())).toEqual([
      "Starting video generation",
      "0%|        | 0/4",
      "25%|██      | 1/4",
      "50%|████    | 2/4",
      "75%|██████  | 3/4",
      "100%|████████| 4/4",
    ]);
    expect(done.logs?.every((l) => l.source === "USER" && !Number.isNaN(Date.parse(l.timestamp)))).toBe(true);

    const result = await fetch(job.response_url, { headers: key() });
    expect(result.status).toBe(200);
    const { video } = (await result.json()) as {
      video: { url: string; content_type: string; file_name: string; file_size: number };
    };
    expect(video).toMatchObject({ content_type: "video/mp4", file_name: "output.mp4" });
    const head = await fetch(video.url, { method: "HEAD" });
    expect(head.headers.get("content-type")).toBe("video/mp4");
    expect(Number(head.headers.get("content-length"))).toBe(video.file_size);
    expect(await downloadedSeconds(video.url, "happy.mp4")).toBeCloseTo(1, 0);

    expect(fal.stats.submits).toBe(before + 1);
    const record = fal.stats.jobs.get(job.request_id);
    expect(record).toMatchObject({
      endpointId: ENDPOINT,
      status: "COMPLETED",
      cancelled: false,
      failed: false,
    });
    expect(record?.input).toEqual({ prompt: "a dolly shot", duration: "1", image_urls: ["https://x/y.png"] });
  });

  it("keeps the namespace and drops the endpoint's sub-path in the request URLs", async () => {
    const job = await submitted({ prompt: "p" }, NAMESPACED);
    expect(job.status_url).toBe(`${fal.url}/workflows/acme/storyboard/requests/${job.request_id}/status`);
    expect((await completed(job)).at(-1)?.code).toBe(200);
    const elsewhere = job.status_url.replace("/storyboard/", "/other-app/");
    expect((await fetch(elsewhere, { headers: key() })).status).toBe(404);
  });

  it("counts the requests ahead in the queue", async () => {
    fal.knobs.queueMs = 10_000;
    const first = await submitted();
    const second = await submitted();
    expect([first.queue_position, second.queue_position]).toEqual([0, 1]);
    expect((await status(second)).body).toMatchObject({ status: "IN_QUEUE", queue_position: 1 });
    await fetch(first.cancel_url, { method: "PUT", headers: key() });
    expect((await status(second)).body.queue_position).toBe(0);
    await fetch(second.cancel_url, { method: "PUT", headers: key() });
  });

  it("includes logs only when asked, with fal's JS (1/0) and Python (true/false) spellings", async () => {
    fal.knobs.latencyMs = 10_000;
    const job = await submitted();
    await pollUntil(job, (s) => s.status === "IN_PROGRESS");
    expect((await status(job, "0")).body.logs).toBeNull();
    expect((await status(job, "false")).body.logs).toBeNull();
    expect((await status(job, "true")).body.logs?.[0]?.message).toBe("Starting video generation");
    await fetch(job.cancel_url, { method: "PUT", headers: key() });
  });

  it("answers the result of an unfinished request with 400, and unknown requests with 404", async () => {
    fal.knobs.queueMs = 10_000;
    const job = await submitted();
    const early = await fetch(job.response_url, { headers: key() });
    expect([early.status, await early.json()]).toEqual([400, { detail: "Request is still in progress" }]);
    await fetch(job.cancel_url, { method: "PUT", headers: key() });
    const unknown = job.status_url.replace(job.request_id, "00000000-0000-4000-8000-000000000000");
    expect((await fetch(unknown, { headers: key() })).status).toBe(404);
  });

  it("rejects a body that is not a JSON object with 422, an unknown endpoint with 404", async () => {
    const before = fal.stats.submits;
    const bad = await fetch(`${fal.url}/${ENDPOINT}`, { method: "POST", headers: key(), body: "{nope" });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual(["body"]);
    expect((await submit([1, 2])).status).toBe(422);
    const unknown = await submit({ prompt: "p" }, "fal-ai/other-model");
    expect(unknown.status).toBe(404);
    expect(fal.stats.submits).toBe(before);
  });
});

describe("fal queue: auth", () => {
  const kinds = ["submit", "status", "result", "cancel"] as const;
  let job: Submitted;
  beforeAll(async () => {
    job = await submitted();
  });
  const call = (kind: (typeof kinds)[number], headers: Record<string, string>) =>
    kind === "submit"
      ? fetch(`${fal.url}/${ENDPOINT}`, { method: "POST", headers, body: "{}" })
      : kind === "status"
        ? fetch(job.status_url, { headers })
        : kind === "result"
          ? fetch(job.response_url, { headers })
          : fetch(job.cancel_url, { method: "PUT", headers });

  it.each(kinds)(
    "%s: no key, a wrong key or another scheme get 401, a key without permission 403",
    async (kind) => {
      const before = fal.stats.submits;
      const cases: [Record<string, string>, number][] = [
        [{}, 401],
        [key("0b5c1d7e-0000-4000-8000-000000000000:deadbeef"), 401],
        [{ authorization: `Bearer ${fal.token}` }, 401],
        [key(fal.forbiddenToken), 403],
      ];
      for (const [headers, code] of cases) {
        const res = await call(kind, headers);
        expect(res.status).toBe(code);
        expect(typeof ((await res.json()) as { detail: unknown }).detail).toBe("string");
      }
      expect(fal.stats.submits).toBe(before);
      expect(fal.stats.jobs.get(job.request_id)?.cancelled).toBe(false);
    },
  );
});

describe("fal queue: knobs", () => {
  it("failNext: the next job completes with error and error_type, and its result is the model's error", async () => {
    fal.knobs.failNext = 1;
    const job = await submitted();
    const last = (await completed(job)).at(-1);
    expect(last?.code).toBe(200);
    expect(last?.body).toMatchObject({
      status: "COMPLETED",
      error: "The model failed to generate a video.",
      error_type: "internal_server_error",
    });
    expect(last?.body.logs?.at(-1)).toMatchObject({ level: "ERROR" });
    const result = await fetch(job.response_url, { headers: key() });
    expect(result.status).toBe(500);
    expect(result.headers.get("x-fal-retryable")).toBe("false");
    expect(await result.json()).toEqual({
      detail: [
        {
          loc: ["body"],
          msg: "The model failed to generate a video.",
          type: "internal_server_error",
          url: "https://docs.fal.ai/errors#internal_server_error",
        },
      ],
    });
    expect(fal.stats.jobs.get(job.request_id)?.failed).toBe(true);

    const next = await submitted();
    await completed(next);
    expect((await fetch(next.response_url, { headers: key() })).status).toBe(200);
  });

  it("failure: a model error of another status and type", async () => {
    fal.knobs.failNext = 1;
    fal.knobs.failure = {
      status: 422,
      type: "content_policy_violation",
      message: "Flagged by the safety checker.",
    };
    const job = await submitted();
    expect((await completed(job)).at(-1)?.body.error_type).toBe("content_policy_violation");
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(422);
    fal.knobs.failure = {
      status: 500,
      type: "internal_server_error",
      message: "The model failed to generate a video.",
    };
  });

  it("rateLimitNext: submits and status calls answer 429 with Retry-After in seconds, then recover", async () => {
    fal.knobs.rateLimitNext = { submit: 2 };
    fal.knobs.retryAfterSeconds = 3;
    const before = fal.stats.submits;
    for (let i = 0; i < 2; i++) {
      const limited = await submit();
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("3");
      expect(await limited.json()).toEqual({ detail: "Rate limit exceeded" });
    }
    expect(fal.stats.submits).toBe(before);
    const job = await submitted();
    expect(fal.stats.submits).toBe(before + 1);

    fal.knobs.rateLimitNext = { status: 1 };
    const calls = fal.stats.statusCalls;
    expect((await status(job)).code).toBe(429);
    expect((await completed(job)).at(-1)?.code).toBe(200);
    expect(fal.stats.statusCalls).toBeGreaterThanOrEqual(calls + 2);
  });

  it("serverErrorNext: the next requests of a kind answer 5xx without creating jobs", async () => {
    fal.knobs.serverErrorNext = { submit: 1, status: 1 };
    const before = fal.stats.submits;
    expect((await submit()).status).toBe(503);
    expect(fal.stats.submits).toBe(before);
    const job = await submitted();
    expect((await status(job)).code).toBe(503);
    fal.knobs.serverErrorStatus = 502;
    fal.knobs.serverErrorNext = { result: 1 };
    await completed(job);
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(502);
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(200);
    fal.knobs.serverErrorStatus = 503;
  });

  it("hangStatus: status calls get no answer until the knob is cleared, or until the client gives up", async () => {
    const job = await submitted();
    await completed(job);
    fal.knobs.hangStatus = true;
    const calls = fal.stats.statusCalls;
    await expect(
      fetch(job.status_url, { headers: key(), signal: AbortSignal.timeout(50) }),
    ).rejects.toThrow();
    let answered = false;
    const pending = fetch(job.status_url, { headers: key() }).then((res) => {
      answered = true;
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(answered).toBe(false);
    expect(fal.stats.statusCalls).toBe(calls + 2);
    fal.knobs.hangStatus = false;
    const res = await pending;
    expect([res.status, ((await res.json()) as StatusBody).status]).toEqual([200, "COMPLETED"]);
  });

  it("malformedOutput: a video URL that is no URL, a file that is no video, or no video at all", async () => {
    fal.knobs.malformedOutput = "bad-url";
    const badUrl = await submitted();
    await completed(badUrl);
    const { video } = (await (await fetch(badUrl.response_url, { headers: key() })).json()) as {
      video: { url: string };
    };
    expect(() => new URL(video.url)).toThrow();

    fal.knobs.malformedOutput = "not-video";
    const notVideo = await submitted();
    await completed(notVideo);
    const body = (await (await fetch(notVideo.response_url, { headers: key() })).json()) as {
      video: { url: string; content_type: string };
    };
    expect(body.video.content_type).toBe("video/mp4");
    await expect(downloadedSeconds(body.video.url, "not-video.mp4")).rejects.toThrow();

    fal.knobs.malformedOutput = "no-video";
    const noVideo = await submitted();
    await completed(noVideo);
    expect(await (await fetch(noVideo.response_url, { headers: key() })).json()).toEqual({});
  });

  it("outputSeconds: overrides the requested duration", async () => {
    fal.knobs.outputSeconds = 2;
    const job = await submitted({ prompt: "p", duration: "5s" });
    await completed(job);
    const { video } = (await (await fetch(job.response_url, { headers: key() })).json()) as {
      video: { url: string };
    };
    expect(await downloadedSeconds(video.url, "two.mp4")).toBeCloseTo(2, 0);
  });
});

describe("fal queue: cancel", () => {
  const cancel = async (job: Submitted) => {
    const res = await fetch(job.cancel_url, { method: "PUT", headers: key() });
    return [res.status, await res.json()];
  };

  it("in the queue: 202, and the request completes as cancelled by the client without running", async () => {
    fal.knobs.queueMs = 10_000;
    const job = await submitted();
    const cancels = fal.stats.cancels;
    expect(await cancel(job)).toEqual([202, { status: "CANCELLATION_REQUESTED" }]);
    expect(fal.stats.cancels).toBe(cancels + 1);
    const { code, body } = await status(job);
    expect(code).toBe(200);
    expect(body).toMatchObject({ status: "COMPLETED", error_type: "client_cancelled", logs: [] });
    expect(body.metrics?.inference_time).toBeNull();
    const result = await fetch(job.response_url, { headers: key() });
    expect(result.status).toBe(499);
    expect(result.headers.get("x-fal-error-type")).toBe("client_cancelled");
    expect(await result.json()).toEqual({
      detail: "Request cancelled by the client.",
      error_type: "client_cancelled",
    });
    expect(fal.stats.jobs.get(job.request_id)).toMatchObject({ cancelled: true, cancelledIn: "IN_QUEUE" });
  });

  it("in progress: 202, and a model that honours the signal stops", async () => {
    fal.knobs.latencyMs = 10_000;
    const job = await submitted();
    await pollUntil(job, (s) => s.status === "IN_PROGRESS");
    expect(await cancel(job)).toEqual([202, { status: "CANCELLATION_REQUESTED" }]);
    expect((await status(job)).body).toMatchObject({ status: "COMPLETED", error_type: "client_cancelled" });
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(499);
    expect(fal.stats.jobs.get(job.request_id)).toMatchObject({
      cancelledIn: "IN_PROGRESS",
      status: "COMPLETED",
    });
  });

  it("in progress on a model that ignores the signal: 202, and the request still completes with its output", async () => {
    fal.knobs.honourCancel = false;
    fal.knobs.latencyMs = 150;
    const job = await submitted();
    await pollUntil(job, (s) => s.status === "IN_PROGRESS");
    expect(await cancel(job)).toEqual([202, { status: "CANCELLATION_REQUESTED" }]);
    expect((await completed(job)).at(-1)?.body.error).toBeUndefined();
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(200);
    expect(fal.stats.jobs.get(job.request_id)).toMatchObject({ cancelled: true, cancelledIn: "IN_PROGRESS" });
  });

  it("completed: 400 ALREADY_COMPLETED; unknown: 404 NOT_FOUND", async () => {
    const job = await submitted();
    await completed(job);
    expect(await cancel(job)).toEqual([400, { status: "ALREADY_COMPLETED" }]);
    expect(fal.stats.jobs.get(job.request_id)?.cancelled).toBe(false);
    const unknown = { ...job, cancel_url: job.cancel_url.replace(job.request_id, "no-such-request") };
    expect(await cancel(unknown)).toEqual([404, { status: "NOT_FOUND" }]);
  });
});

describe("fal queue: an input the model's schema refuses", () => {
  const valid = { prompt: "@Image1 walks in", image_urls: ["https://x/a.png"], duration: "15" };
  const images = (n: number) => Array.from({ length: n }, (_, i) => `https://x/${i}.png`);
  const url = (type: string) => `https://docs.fal.ai/errors#${type}`;

  it("a valid input runs to a video as any other", async () => {
    const job = await submitted(valid, SEEDANCE);
    expect((await completed(job)).at(-1)?.body.error).toBeUndefined();
    expect((await fetch(job.response_url, { headers: key() })).status).toBe(200);
  });

  it.each<[string, Record<string, unknown>, unknown[]]>([
    [
      "a duration past 15",
      { ...valid, duration: 20 },
      [
        {
          loc: ["body", "duration"],
          msg: "Input should be 'auto', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14' or '15'",
          type: "one_of",
          url: url("one_of"),
          ctx: { expected: ["auto", ...Array.from({ length: 12 }, (_, i) => String(i + 4))] },
          input: 20,
        },
      ],
    ],
    [
      "ten reference images where 9 is the most",
      { ...valid, image_urls: images(10) },
      [
        {
          loc: ["body", "image_urls"],
          msg: "Sequence should have at most 9 items",
          type: "sequence_too_long",
          url: url("sequence_too_long"),
          ctx: { max_length: 9 },
          input: images(10),
        },
      ],
    ],
    [
      "no prompt, and a flag of the wrong type",
      { image_urls: ["https://x/a.png"], generate_audio: "yes" },
      [
        { loc: ["body", "prompt"], msg: "Field required", type: "missing", url: url("missing") },
        {
          loc: ["body", "generate_audio"],
          msg: "Input should be a valid boolean",
          type: "bool_type",
          url: url("bool_type"),
          input: "yes",
        },
      ],
    ],
  ])(
    "%s: queued, then COMPLETED with fal's error, its result a 422 naming the field",
    async (_, input, detail) => {
      const res = await submit(input, SEEDANCE);
      expect(res.status).toBe(200);
      const job = (await res.json()) as Submitted;
      const last = (await completed(job)).at(-1);
      expect(last).toEqual({
        code: 200,
        body: expect.objectContaining({ status: "COMPLETED", error: "Invalid status code: 422", logs: [] }),
      });
      const result = await fetch(job.response_url, { headers: key() });
      expect(result.status).toBe(422);
      expect(result.headers.get("x-fal-retryable")).toBe("false");
      expect(await result.json()).toEqual({ detail });
      expect(fal.stats.jobs.get(job.request_id)).toMatchObject({ failed: true, refusal: detail });
      expect((await fetch(`${fal.url}/files/${job.request_id}/output.mp4`)).status).toBe(404);
    },
  );

  it("records every request with the body it carried, whatever it was answered", async () => {
    const from = fal.stats.requests.length;
    const job = await submitted({ ...valid, duration: 20 }, SEEDANCE);
    await fetch(`${fal.url}/${SEEDANCE}`, { method: "POST", headers: key("no-such-key"), body: "{not json" });
    await fetch(job.status_url, { headers: key() }); // refused at once: no queue here, no model run
    expect(fal.stats.requests.slice(from)).toEqual([
      { method: "POST", path: `/${SEEDANCE}`, kind: "submit", status: 200, body: { ...valid, duration: 20 } },
      { method: "POST", path: `/${SEEDANCE}`, kind: "submit", status: 401, body: "{not json" },
      { method: "GET", path: new URL(job.status_url).pathname, kind: "status", status: 200, body: null },
    ]);
  });
});
