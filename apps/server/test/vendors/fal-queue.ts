/**
 * The fal queue's routes over the server's shared state: submit, status, result and cancel of a
 * request, and the output files it links to. fal-server.ts authenticates and routes requests here;
 * the sources each answer follows are listed there.
 */
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { type FalKnobs, type FalStats, Job } from "./fal-job.js";
import { falRefusal } from "./input-refusals.js";
import type { InputCheck } from "./input-schema.js";
import { loseAnswer } from "./lost-answer.js";
import { testVideo } from "./video.js";

const NAMESPACES = new Set(["workflows", "comfy"]);
const NOT_A_VIDEO = Buffer.from("<!doctype html><title>Not found</title><p>Object expired.</p>\n");
const CANCELLED_DETAIL = "Request cancelled by the client.";
const REFUSED_ERROR = "Invalid status code: 422";

/** A completed request's result: the status, body and headers its result route answers. */
export interface FalOutcome {
  status: number;
  body: unknown;
  headers: Record<string, string>;
}

/** What the routes share with the server. */
export interface FalContext {
  readonly knobs: FalKnobs;
  readonly stats: FalStats;
  readonly jobs: Map<string, Job>;
  /** Input checks by endpoint id, from the published schemas. */
  readonly checks: Map<string, InputCheck>;
  /** Sends a request's webhook when it ends (fal-webhooks.ts). */
  readonly webhooks: { watch(job: Job): void; stopped(job: Job): void };
  /** The server's base URL (known once it listens). */
  url(): string;
}

export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function readBody(req: IncomingMessage, limit = 10 * 1024 * 1024): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) resolve(null);
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function requestedSeconds(input: unknown): number {
  const duration = (input as { duration?: unknown } | null)?.duration;
  const seconds = Number.parseFloat(String(duration ?? ""));
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 2;
}

/** The queue's route handlers over `ctx`. */
export function falQueue(ctx: FalContext) {
  const { knobs, stats, jobs, checks, webhooks } = ctx;

  const urlsOf = (job: Job) => {
    const base = `${ctx.url()}/${job.appPath}/requests/${job.requestId}`;
    return {
      request_id: job.requestId,
      response_url: base,
      status_url: `${base}/status`,
      cancel_url: `${base}/cancel`,
    };
  };
  const queuePosition = (job: Job, now: number) =>
    [...jobs.values()].filter(
      (j) => j.submittedAt <= job.submittedAt && j !== job && j.statusAt(now) === "IN_QUEUE",
    ).length;
  const outcomeError = (job: Job) =>
    job.stoppedAt !== null
      ? { error: CANCELLED_DETAIL, error_type: "client_cancelled" }
      : job.refusal
        ? { error: REFUSED_ERROR }
        : job.failure
          ? { error: job.failure.message, error_type: job.failure.type }
          : {};

  function statusBody(job: Job, withLogs: boolean) {
    const now = Date.now();
    const status = job.statusAt(now);
    const logs = withLogs ? job.logsAt(now) : null;
    if (status === "IN_QUEUE") return { status, queue_position: queuePosition(job, now), ...urlsOf(job) };
    if (status === "IN_PROGRESS") return { status, ...urlsOf(job), logs };
    const ranUntil = Math.max(job.startsAt, Math.min(job.stoppedAt ?? job.endsAt, job.endsAt));
    const metrics = {
      inference_time:
        job.stoppedAt !== null && job.stoppedAt < job.startsAt ? null : (ranUntil - job.startsAt) / 1000,
    };
    return { status, ...urlsOf(job), logs, metrics, ...outcomeError(job) };
  }

  /** What the request's result answers once it is COMPLETED: its status, body and headers. */
  async function outcome(job: Job): Promise<FalOutcome> {
    const headers: Record<string, string> = { "x-fal-request-id": job.requestId };
    const answer = (status: number, body: unknown, more: Record<string, string> = {}) => ({
      status,
      body,
      headers: { ...headers, ...more },
    });
    if (job.stoppedAt !== null) {
      const body = { detail: CANCELLED_DETAIL, error_type: "client_cancelled" };
      return answer(499, body, { "x-fal-error-type": "client_cancelled" });
    }
    if (job.refusal) return answer(422, { detail: job.refusal }, { "x-fal-retryable": "false" });
    if (job.failure) {
      const { status, type, message } = job.failure;
      const detail = [{ loc: ["body"], msg: message, type, url: `https://docs.fal.ai/errors#${type}` }];
      return answer(status, { detail }, { "x-fal-retryable": "false" });
    }
    if (job.malformed === "no-video") return answer(200, {});
    if (job.malformed === "bad-url") {
      return answer(200, {
        video: { url: "output.mp4", content_type: "video/mp4", file_name: "output.mp4" },
      });
    }
    const size =
      job.malformed === "not-video"
        ? NOT_A_VIDEO.length
        : (await stat(await testVideo(job.outputSeconds))).size;
    const url = `${ctx.url()}/files/${job.requestId}/output.mp4`;
    return answer(200, {
      video: { url, content_type: "video/mp4", file_name: "output.mp4", file_size: size },
    });
  }

  async function result(job: Job, res: ServerResponse) {
    if (job.status !== "COMPLETED") {
      return json(
        res,
        400,
        { detail: "Request is still in progress" },
        { "x-fal-request-id": job.requestId },
      );
    }
    const { status, body, headers } = await outcome(job);
    json(res, status, body, headers);
  }

  function cancel(job: Job, res: ServerResponse) {
    const now = Date.now();
    const status = job.statusAt(now);
    if (status === "COMPLETED") return json(res, 400, { status: "ALREADY_COMPLETED" });
    job.cancelled = true;
    job.cancelledIn = status;
    if (status === "IN_QUEUE" || knobs.honourCancel) {
      job.stoppedAt = now;
      webhooks.stopped(job);
    }
    return json(res, 202, { status: "CANCELLATION_REQUESTED" });
  }

  async function submit(
    endpointId: string,
    text: string | null,
    res: ServerResponse,
    query: URLSearchParams,
  ) {
    if (text === null) return json(res, 413, { detail: "Request body too large" });
    let input: unknown = {};
    try {
      if (text.trim() !== "") input = JSON.parse(text);
    } catch (error) {
      const msg = `Invalid JSON body: ${(error as Error).message}`;
      return json(res, 422, { detail: [{ loc: ["body"], msg, type: "value_error.jsondecode" }] });
    }
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      return json(res, 422, {
        detail: [{ loc: ["body"], msg: "Input should be an object", type: "dict_type" }],
      });
    }
    const problems = checks.get(endpointId)?.(input) ?? [];
    const refusal = problems.length > 0 ? falRefusal(problems) : null;
    const failing = !refusal && knobs.failNext > 0;
    if (failing) knobs.failNext -= 1;
    const parts = endpointId.split("/");
    const appPath = parts.slice(0, NAMESPACES.has(parts[0] ?? "") ? 3 : 2).join("/");
    const job = new Job({
      requestId: randomUUID(),
      endpointId,
      appPath,
      input,
      webhookUrl: query.get("fal_webhook"),
      submittedAt: Date.now(),
      queueMs: knobs.queueMs,
      latencyMs: refusal ? 0 : knobs.latencyMs,
      failure: failing ? { ...knobs.failure } : null,
      refusal,
      outputSeconds: knobs.outputSeconds ?? requestedSeconds(input),
      malformed: knobs.malformedOutput,
    });
    if (!job.failed && !job.malformed) void testVideo(job.outputSeconds).catch(() => {});
    if (job.webhookUrl !== null && knobs.dropWebhooksNext > 0) {
      knobs.dropWebhooksNext -= 1;
      job.webhookDropped = true;
    }
    webhooks.watch(job);
    jobs.set(job.requestId, job);
    stats.jobs.set(job.requestId, job);
    stats.submits += 1;
    if (knobs.loseAnswerNext > 0) {
      knobs.loseAnswerNext -= 1;
      job.answerLost = true;
      return loseAnswer(res, knobs.loseAnswerAs);
    }
    return json(
      res,
      200,
      { status: "IN_QUEUE", ...urlsOf(job), queue_position: queuePosition(job, Date.now()) },
      {
        "x-fal-request-id": job.requestId,
      },
    );
  }

  async function serveFile(requestId: string, req: IncomingMessage, res: ServerResponse) {
    const job = jobs.get(requestId);
    const gone = job?.status !== "COMPLETED" || job.failed || job.stoppedAt !== null;
    if (!job || gone || job.malformed === "bad-url") {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not Found");
      return;
    }
    if (job.malformed === "not-video") {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": NOT_A_VIDEO.length });
      res.end(req.method === "HEAD" ? undefined : NOT_A_VIDEO);
      return;
    }
    const path = await testVideo(job.outputSeconds);
    const { size } = await stat(path);
    res.writeHead(200, { "content-type": "video/mp4", "content-length": size });
    if (req.method === "HEAD") res.end();
    else createReadStream(path).pipe(res);
  }

  return { statusBody, outcome, result, cancel, submit, serveFile };
}
