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
 * - Webhooks (`fal_webhook`), their ED25519 signatures and the JWKS: fal-webhooks.ts.
 *
 * Here: auth, the error knobs and routing; fal-queue.ts answers the queue's routes, fal-webhooks.ts
 * sends webhooks, fal-job.ts holds the data and a request's state on the clock.
 */
import { randomBytes, randomUUID } from "node:crypto";
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
  type Job,
} from "./fal-job.js";
import { falQueue, json, readBody } from "./fal-queue.js";
import { falWebhooks } from "./fal-webhooks.js";
import { inputCheck } from "./input-schema.js";
import { whenAnswered } from "./lost-answer.js";
import { recordedBody } from "./received.js";

export type * from "./fal-job.js";

const falKey = () => `${randomUUID()}:${randomBytes(16).toString("hex")}`;

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
    webhooks: [],
  };
  const jobs = new Map<string, Job>();
  let url = "";
  const userId = randomUUID();
  const webhooks = falWebhooks({
    knobs,
    stats,
    userId,
    retryDelaysMs: options.webhookRetryDelaysMs ?? [100, 500, 2000],
    outcome: (job) => queue.outcome(job),
  });
  const queue = falQueue({ knobs, stats, jobs, checks, webhooks, url: () => url });

  const take = (counters: Partial<Record<FalRequestKind, number>>, kind: FalRequestKind) => {
    const left = counters[kind] ?? 0;
    if (left > 0) counters[kind] = left - 1;
    return left > 0;
  };
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
    whenAnswered(res, (status) => stats.requests.push({ ...entry, status }));
    let path: string;
    try {
      path = decodeURIComponent(target.pathname).replace(/^\/+|\/+$/g, "");
    } catch {
      return json(res, 404, { detail: "Not Found" });
    }
    if (path === ".well-known/jwks.json" && req.method === "GET") return json(res, 200, webhooks.jwks());
    const file = /^files\/([^/]+)\/[^/]+$/.exec(path);
    if (file && (req.method === "GET" || req.method === "HEAD")) {
      entry.kind = "file";
      return queue.serveFile(file[1] as string, req, res);
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
    if (kind === "submit") return queue.submit(path, text, res, target.searchParams);
    const job = jobs.get(route?.[2] ?? "");
    if (!job || job.appPath !== route?.[1]) {
      return kind === "cancel"
        ? json(res, 404, { status: "NOT_FOUND" })
        : json(res, 404, { detail: "Request not found" });
    }
    if (kind === "cancel") return queue.cancel(job, res);
    if (kind === "result") return queue.result(job, res);
    const logs = ["1", "true"].includes(target.searchParams.get("logs") ?? "");
    const answer = () => {
      const body = queue.statusBody(job, logs);
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
    jwksUrl: `${url}/.well-known/jwks.json`,
    userId,
    rotateSigningKey: () => webhooks.rotate(),
    async close() {
      for (const call of parked) call.res.destroy();
      parked.clear();
      await webhooks.close();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
