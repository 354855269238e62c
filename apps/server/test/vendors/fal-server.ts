/**
 * A local fal queue API (queue.fal.run) for adapter tests, written from fal's public documentation:
 * - Queue API and its operation pages (docs.fal.ai/model-endpoints/queue, fal.ai/docs/api-reference/
 *   inference-api, fal.ai/docs/inference-api/queue/{status,result,cancel}): submit to the full
 *   endpoint id, status/result/cancel under owner/app only (the endpoint's sub-path is dropped, the
 *   `workflows`/`comfy` namespaces kept), status answers 202 while queued or running and 200 when
 *   complete, the result carries the status and body the model returned, cancel's statuses.
 * - Request Error Types (fal.ai/docs/documentation/model-apis/request-errors): `{detail, error_type}`
 *   with `X-Fal-Error-Type`, `client_cancelled` as 499. Model Errors (docs.fal.ai/errors): `detail`
 *   as an array of `{loc, msg, type, url}` with `X-Fal-Retryable`.
 * - fal's clients for exact field names: @fal-ai/client (fal-ai/fal-js libs/client/src/queue.ts,
 *   types/common.ts: RequestLog, queue statuses, `logs=1|0`) and fal_client (fal-ai/fal
 *   projects/fal_client: `detail` in error bodies, `logs=true|false`, `fal_webhook` query).
 * - Inputs a model's schema refuses (`inputSchemas`): fal's queue does not check the input when it
 *   takes it (an endpoint's queue OpenAPI, fal.ai/api/openapi/queue/openapi.json?endpoint_id=<id>,
 *   declares only a 200 for the submit); the model's app refuses it when the request runs, and the
 *   request ends there. The webhook docs (docs.fal.ai/model-endpoints/webhooks, "Errors") show such
 *   a request: status `ERROR`, `error: "Invalid status code: 422"`, payload `{detail: [{loc:
 *   ["body", "model_name"], msg: "field required", ...}]}`; the result answers that status and body
 *   (fal-js libs/client/src/response.ts reads a 422 as a ValidationError of `detail`), worded as
 *   docs.fal.ai/errors lists them (input-refusals.ts). The status's `error` is taken to read as the
 *   webhook's.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  DEFAULT_KNOBS,
  type FalKnobs,
  type FalRequest,
  type FalRequestKind,
  type FalServer,
  type FalServerOptions,
  type FalStats,
  Job,
} from "./fal-job.js";
import { falRefusal } from "./input-refusals.js";
import { inputCheck } from "./input-schema.js";
import { recordedBody } from "./received.js";
import { testVideo } from "./video.js";

export type * from "./fal-job.js";

const NAMESPACES = new Set(["workflows", "comfy"]);
const NOT_A_VIDEO = Buffer.from("<!doctype html><title>Not found</title><p>Object expired.</p>\n");
const CANCELLED_DETAIL = "Request cancelled by the client.";
const REFUSED_ERROR = "Invalid status code: 422";

const falKey = () => `${randomUUID()}:${randomBytes(16).toString("hex")}`;

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage, limit = 10 * 1024 * 1024): Promise<string | null> {
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

/** Starts a fal queue API on 127.0.0.1 with a random port. */
export async function startFalServer(options: FalServerOptions = {}): Promise<FalServer> {
  const endpoints = new Set(options.endpoints ?? ["fal-ai/refvid-test/reference-to-video"]);
  const token = falKey();
  const checks = new Map(Object.entries(options.inputSchemas ?? {}).map(([id, s]) => [id, inputCheck(s)]));
  const forbiddenToken = falKey();
  const parked = new Set<{ res: ServerResponse; answer: () => void }>();
  const state: FalKnobs = { ...DEFAULT_KNOBS, ...options.knobs };
  const knobs = new Proxy(state, {
    set(target, key, value) {
      Reflect.set(target, key, value);
      if (key === "hangStatus" && !value) {
        for (const call of parked) call.answer();
        parked.clear();
      }
      return true;
    },
  });
  const stats: FalStats = {
    submits: 0,
    statusCalls: 0,
    resultCalls: 0,
    cancels: 0,
    jobs: new Map(),
    requests: [],
  };
  const jobs = new Map<string, Job>();
  let url = "";

  const take = (counters: Partial<Record<FalRequestKind, number>>, kind: FalRequestKind) => {
    const left = counters[kind] ?? 0;
    if (left > 0) counters[kind] = left - 1;
    return left > 0;
  };
  const urlsOf = (job: Job) => {
    const base = `${url}/${job.appPath}/requests/${job.requestId}`;
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

  async function result(job: Job, res: ServerResponse) {
    const headers = { "x-fal-request-id": job.requestId };
    if (job.status !== "COMPLETED")
      return json(res, 400, { detail: "Request is still in progress" }, headers);
    if (job.stoppedAt !== null) {
      return json(
        res,
        499,
        { detail: CANCELLED_DETAIL, error_type: "client_cancelled" },
        {
          ...headers,
          "x-fal-error-type": "client_cancelled",
        },
      );
    }
    if (job.refusal)
      return json(res, 422, { detail: job.refusal }, { ...headers, "x-fal-retryable": "false" });
    if (job.failure) {
      const { status, type, message } = job.failure;
      const detail = [{ loc: ["body"], msg: message, type, url: `https://docs.fal.ai/errors#${type}` }];
      return json(res, status, { detail }, { ...headers, "x-fal-retryable": "false" });
    }
    const file = `${url}/files/${job.requestId}/output.mp4`;
    if (job.malformed === "no-video") return json(res, 200, {}, headers);
    if (job.malformed === "bad-url") {
      return json(
        res,
        200,
        { video: { url: "output.mp4", content_type: "video/mp4", file_name: "output.mp4" } },
        headers,
      );
    }
    const size =
      job.malformed === "not-video"
        ? NOT_A_VIDEO.length
        : (await stat(await testVideo(job.outputSeconds))).size;
    const video = { url: file, content_type: "video/mp4", file_name: "output.mp4", file_size: size };
    return json(res, 200, { video }, headers);
  }

  function cancel(job: Job, res: ServerResponse) {
    const now = Date.now();
    const status = job.statusAt(now);
    if (status === "COMPLETED") return json(res, 400, { status: "ALREADY_COMPLETED" });
    job.cancelled = true;
    job.cancelledIn = status;
    if (status === "IN_QUEUE" || knobs.honourCancel) job.stoppedAt = now;
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
    jobs.set(job.requestId, job);
    stats.jobs.set(job.requestId, job);
    stats.submits += 1;
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

  function authorize(req: IncomingMessage, res: ServerResponse): boolean {
    const header = req.headers.authorization;
    if (!header) {
      json(res, 401, { detail: "Authentication is required to access this application." });
      return false;
    }
    const [scheme, key] = header.split(" ", 2);
    if (scheme?.toLowerCase() === "key" && key === token) return true;
    if (scheme?.toLowerCase() === "key" && key === forbiddenToken) {
      json(res, 403, { detail: "This key does not have permission to access this application." });
    } else json(res, 401, { detail: "No user found for Key ID and Secret" });
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const target = new URL(req.url ?? "/", "http://fal.local");
    const text = await readBody(req);
    const entry: FalRequest = {
      method: req.method ?? "GET",
      path: target.pathname,
      kind: "other",
      status: 0,
      body: recordedBody(text),
    };
    res.once("finish", () => stats.requests.push({ ...entry, status: res.statusCode }));
    let path: string;
    try {
      path = decodeURIComponent(target.pathname).replace(/^\/+|\/+$/g, "");
    } catch {
      return json(res, 404, { detail: "Not Found" });
    }
    const file = /^files\/([^/]+)\/[^/]+$/.exec(path);
    if (file && (req.method === "GET" || req.method === "HEAD")) {
      entry.kind = "file";
      return serveFile(file[1] as string, req, res);
    }
    const route = /^((?:(?:workflows|comfy)\/)?[^/]+\/[^/]+)\/requests\/([^/]+)(\/status|\/cancel)?$/.exec(
      path,
    );
    const kind: FalRequestKind = !route
      ? "submit"
      : route[3] === "/status"
        ? "status"
        : route[3]
          ? "cancel"
          : "result";
    entry.kind = kind;
    const method = { submit: "POST", status: "GET", result: "GET", cancel: "PUT" }[kind];
    if (kind === "status") stats.statusCalls += 1;
    if (kind === "result") stats.resultCalls += 1;
    if (kind === "cancel") stats.cancels += 1;
    if (take(knobs.serverErrorNext, kind))
      return json(res, knobs.serverErrorStatus, { detail: "Service Unavailable" });
    if (!authorize(req, res)) return;
    if (req.method !== method) return json(res, 405, { detail: "Method Not Allowed" });
    if (kind === "submit" && !endpoints.has(path))
      return json(res, 404, { detail: `Application '${path}' not found` });
    if (take(knobs.rateLimitNext, kind)) {
      return json(
        res,
        429,
        { detail: "Rate limit exceeded" },
        { "retry-after": String(knobs.retryAfterSeconds) },
      );
    }
    if (kind === "submit") return submit(path, text, res, target.searchParams);
    const job = jobs.get(route?.[2] ?? "");
    if (!job || job.appPath !== route?.[1]) {
      return kind === "cancel"
        ? json(res, 404, { status: "NOT_FOUND" })
        : json(res, 404, { detail: "Request not found" });
    }
    if (kind === "cancel") return cancel(job, res);
    if (kind === "result") return result(job, res);
    const logs = ["1", "true"].includes(target.searchParams.get("logs") ?? "");
    const answer = () => {
      const body = statusBody(job, logs);
      json(res, body.status === "COMPLETED" ? 200 : 202, body, { "x-fal-request-id": job.requestId });
    };
    if (!knobs.hangStatus) return answer();
    const call = { res, answer };
    parked.add(call);
    res.on("close", () => parked.delete(call));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => {
      if (!res.headersSent) json(res, 500, { detail: `Internal Server Error: ${error.message}` });
      else res.destroy(error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    token,
    forbiddenToken,
    knobs,
    stats,
    close: () =>
      new Promise<void>((resolve, reject) => {
        for (const call of parked) call.res.destroy();
        parked.clear();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
