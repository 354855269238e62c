/**
 * A local Replicate predictions API, written from Replicate's public documentation, for testing a
 * refvid adapter without reaching api.replicate.com. It hosts one official video model, runs each
 * prediction on timers (`starting` → `processing` with tqdm progress in `logs` → a terminal status),
 * serves the output MP4 as replicate.delivery would, signs webhooks, and has knobs for the error and
 * slow paths.
 *
 * Relied on:
 * - Replicate's OpenAPI document (https://api.replicate.com/openapi.json, "Replicate HTTP API"):
 *   models.predictions.create, predictions.create (`version` as `owner/name`, `owner/name:id` or
 *   `id`), predictions.get, predictions.cancel, predictions.list, webhooks.default.secret.get;
 *   request schemas with `additionalProperties: false`; the prediction schema (statuses incl.
 *   `aborted`, `deadline`, `data_removed`, `urls.{get,cancel,web}`, `version: "hidden"` for official
 *   models, `metrics.predict_time`/`total_time`); the `Prefer: wait[=1..60]` and `Cancel-After`
 *   headers; 201 "created" and 202 "created but does not yet have all outputs"; bearer auth.
 * - https://replicate.com/docs/topics/predictions/create-a-prediction (sync mode holds up to N s,
 *   then returns the prediction as it stands, with a Location header).
 * - https://replicate.com/docs/topics/webhooks/{setup-webhook,receive-webhook,verify-webhook} and
 *   the 2023-02-10 changelog (events start/output/logs/completed, output and logs at most every
 *   500 ms, only the final webhook retried on 4xx/5xx or no answer, `webhook-id`,
 *   `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed
 *   by the base64 part of a `whsec_` secret).
 * - replicate-python `ReplicateError` (RFC 7807 problem details) and replicate/replicate-python#47
 *   (401 `Unauthenticated` bodies; 422 "Invalid version or not permitted"); replicate-javascript
 *   `withAutomaticRetries` (Retry-After in seconds) and `parseProgressFromLogs` (tqdm lines).
 * - Inputs a model's schema refuses (`inputSchemas`): the create itself is refused, as the API
 *   validates inputs (replicate/replicate-python#26, 2024-09: "Prediction inputs are now validated
 *   by the API"), with 422 problem details titled "Input validation failed" whose `invalid_fields`
 *   are `{type, field, description}` (replicate.com/changelog/2024-05-01-improved-validation-for-
 *   api-prediction-payloads), worded as that example's validator words them (input-refusals.ts).
 * Replicate offers no idempotency key: every accepted create is a new prediction.
 */
import { createHmac, randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { replicateRefusal } from "./input-refusals.js";
import { inputCheck } from "./input-schema.js";
import { recordedBody } from "./received.js";
import {
  cancelAfterSeconds,
  defaultKnobs,
  EVENTS,
  type InvalidField,
  invalid,
  iso,
  type Prediction,
  type PredictionStatus,
  predictionId,
  preferWait,
  problem,
  type ReplicateKnobs,
  type ReplicateServer,
  type ReplicateServerOptions,
  type ReplicateStats,
  type RequestKind,
  readBody,
  send,
  sleep,
  TERMINAL,
  tqdm,
  type WebhookEvent,
} from "./replicate-protocol.js";
import { testVideo } from "./video.js";

export type * from "./replicate-protocol.js";

/** Starts the server on 127.0.0.1 with a free port. */
export async function startReplicateServer(options: ReplicateServerOptions = {}): Promise<ReplicateServer> {
  const token = options.token ?? `r8_${randomBytes(18).toString("hex")}`;
  const model = options.model ?? "refvid-test/video-model";
  const versionId = options.versionId ?? randomBytes(32).toString("hex");
  const secondMs = options.secondMs ?? 1000;
  const retryDelays = options.webhookRetryDelaysMs ?? [100, 200, 400];
  const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
  const webhookKey = Buffer.from(webhookSecret.slice("whsec_".length), "base64");
  const closing = new AbortController();
  const inputSchema = options.inputSchemas?.[model] ?? options.inputSchemas?.[versionId];
  const checkInput = inputSchema ? inputCheck(inputSchema) : null;

  const predictions = new Map<string, Prediction>();
  const byFileKey = new Map<string, Prediction>();
  const hanging = new Set<() => void>();
  const releaseHanging = () => {
    for (const release of hanging) release();
    hanging.clear();
  };

  const knobs = { ...defaultKnobs, ...options.knobs } as ReplicateKnobs;
  let hang = knobs.hangStatus;
  Object.defineProperty(knobs, "hangStatus", {
    enumerable: true,
    get: () => hang,
    set: (value: boolean) => {
      hang = value;
      if (!value) releaseHanging();
    },
  });

  const stats: ReplicateStats = {
    submits: 0,
    submitAttempts: 0,
    statusCalls: 0,
    cancels: 0,
    downloads: 0,
    predictions: new Map(),
    webhooks: [],
    requests: [],
  };

  let base = "";

  const removed = (p: Prediction) =>
    p.completedAt !== null && Date.now() - p.completedAt >= knobs.dataRetentionMs;

  function view(p: Prediction): Record<string, unknown> {
    const gone = removed(p);
    const metrics: Record<string, number> = {};
    if (p.completedAt !== null) {
      if (p.startedAt !== null) metrics.predict_time = (p.completedAt - p.startedAt) / 1000;
      metrics.total_time = (p.completedAt - p.createdAt) / 1000;
    }
    const get = `${base}/v1/predictions/${p.stat.id}`;
    return {
      id: p.stat.id,
      model,
      version: p.version,
      input: gone ? {} : p.stat.input,
      logs: gone ? "" : p.logs,
      output: gone ? null : p.output,
      data_removed: gone,
      error: p.error,
      status: p.status,
      source: "api",
      created_at: iso(p.createdAt),
      started_at: iso(p.startedAt),
      completed_at: iso(p.completedAt),
      ...(p.deadline === null ? {} : { deadline: iso(p.deadline) }),
      urls: { get, cancel: `${get}/cancel`, web: `${base}/p/${p.stat.id}` },
      metrics,
    };
  }

  // --- webhooks -------------------------------------------------------------------------------

  async function deliver(p: Prediction, event: WebhookEvent, body: string, status: PredictionStatus) {
    const webhookId = `msg_${randomBytes(16).toString("hex")}`;
    const attempts = event === "completed" ? 1 + retryDelays.length : 1;
    for (let attempt = 1; attempt <= attempts && !closing.signal.aborted; attempt++) {
      const timestamp = String(Math.floor(Date.now() / 1000));
      const signature = createHmac("sha256", webhookKey)
        .update(`${webhookId}.${timestamp}.${body}`)
        .digest("base64");
      let responseStatus: number | null = null;
      try {
        const res = await fetch(p.webhook as string, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": webhookId,
            "webhook-timestamp": timestamp,
            "webhook-signature": `v1,${signature}`,
          },
          body,
          redirect: "manual",
          signal: AbortSignal.any([closing.signal, AbortSignal.timeout(5_000)]),
        });
        await res.arrayBuffer().catch(() => undefined);
        responseStatus = res.status;
      } catch {
        responseStatus = null;
      }
      stats.webhooks.push({ predictionId: p.stat.id, event, webhookId, attempt, status, responseStatus });
      if (responseStatus !== null && responseStatus >= 200 && responseStatus < 300) return;
      const pause = retryDelays[attempt - 1];
      if (attempt < attempts && pause !== undefined) await sleep(pause, closing.signal);
    }
  }

  function notify(p: Prediction, event: WebhookEvent) {
    if (p.webhook === null || !p.events.has(event)) return;
    if (event === "logs" || event === "output") {
      // Replicate sends output and logs events at most once every 500 ms.
      if (Date.now() - p.lastThrottledWebhookAt < 500) return;
      p.lastThrottledWebhookAt = Date.now();
    }
    const body = JSON.stringify(view(p));
    const status = p.status;
    p.webhookChain = p.webhookChain.then(() => deliver(p, event, body, status));
  }

  // --- lifecycle ------------------------------------------------------------------------------

  function later(p: Prediction, ms: number, fn: () => void) {
    const timer = setTimeout(() => {
      p.timers.delete(timer);
      fn();
    }, ms);
    p.timers.add(timer);
  }

  function setStatus(p: Prediction, status: PredictionStatus) {
    p.status = status;
    p.stat.status = status;
  }

  function finish(p: Prediction, status: PredictionStatus) {
    if (TERMINAL.has(p.status)) return;
    for (const timer of p.timers) clearTimeout(timer);
    p.timers.clear();
    setStatus(p, status);
    p.completedAt = Date.now();
    notify(p, "completed");
    for (const settled of p.onSettled) settled();
    p.onSettled.clear();
  }

  function outputOf(p: Prediction): unknown {
    const url = `${base}/delivery/xezq/${p.fileKey}/output.mp4`;
    const shaped = (value: string) => (knobs.outputShape === "list" ? [value] : value);
    switch (p.malformed) {
      case "null":
        return null;
      case "empty-list":
        return [];
      case "not-a-url":
        return shaped("output.mp4");
      default:
        return shaped(url);
    }
  }

  function complete(p: Prediction) {
    p.logs += `${tqdm(p.steps, p.steps, p.latencyMs)}\n`;
    if (p.ending === "fail") {
      p.error = p.failMessage;
      p.logs += `Traceback (most recent call last):\n  File "predict.py", line 88, in predict\nRuntimeError: ${p.failMessage}\n`;
      return finish(p, "failed");
    }
    p.output = outputOf(p);
    notify(p, "output");
    finish(p, "succeeded");
  }

  function run(p: Prediction, queueMs: number) {
    notify(p, "start");
    later(p, queueMs, () => {
      if (p.ending === "abort") return finish(p, "aborted");
      setStatus(p, "processing");
      p.startedAt = Date.now();
      p.logs = "Generating video\n";
      notify(p, "logs");
      for (let step = 1; step < p.steps; step++) {
        later(p, (p.latencyMs * step) / p.steps, () => {
          p.logs += `${tqdm(step, p.steps, p.latencyMs)}\n`;
          notify(p, "logs");
        });
      }
      later(p, p.latencyMs, () => complete(p));
    });
    if (p.deadline !== null) {
      // Past its deadline a prediction is aborted if it never started, canceled if it was running.
      later(p, p.deadline - Date.now(), () => finish(p, p.status === "starting" ? "aborted" : "canceled"));
    }
  }

  // --- handlers -------------------------------------------------------------------------------

  async function create(
    req: IncomingMessage,
    res: ServerResponse,
    route: "model" | "version",
    raw: string | "too-large",
  ) {
    if (raw === "too-large")
      return problem(res, 413, "Request Entity Too Large", "The request body is too large.");
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (error) {
      return problem(res, 400, "Bad Request", `JSON parse error - ${(error as Error).message}`);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return problem(res, 400, "Bad Request", "The request body must be a JSON object.");
    }
    const fields = body as Record<string, unknown>;
    const allowed = new Set(["input", "stream", "webhook", "webhook_events_filter"]);
    if (route === "version") allowed.add("version");
    const problems: InvalidField[] = Object.keys(fields)
      .filter((key) => !allowed.has(key))
      .map((key) => ({
        type: "additional_properties",
        field: key,
        description: "Additional property is not allowed",
      }));

    let version = "hidden";
    if (route === "version") {
      const v = fields.version;
      if (typeof v !== "string" || v === "") {
        problems.push({ type: "required", field: "version", description: "version is required" });
      } else if (v === `${model}:${versionId}` || v === versionId) {
        version = versionId;
      } else if (v !== model) {
        return problem(
          res,
          422,
          "Invalid version or not permitted",
          "The specified version does not exist (or perhaps you don't have permission to use it?)",
        );
      }
    }
    const input = fields.input;
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      problems.push({
        type: "required",
        field: "input",
        description: "input is required and must be an object",
      });
    } else if (checkInput) {
      problems.push(...replicateRefusal(checkInput(input)));
    } else {
      const { prompt, duration } = input as Record<string, unknown>;
      if (typeof prompt !== "string" || prompt.trim() === "") {
        problems.push({ type: "required", field: "input.prompt", description: "prompt is required" });
      }
      if (
        duration !== undefined &&
        (!Number.isInteger(duration) || (duration as number) < 1 || (duration as number) > 60)
      ) {
        problems.push({
          type: "number_range",
          field: "input.duration",
          description: "Must be an integer between 1 and 60",
        });
      }
    }
    const webhook = fields.webhook;
    if (webhook !== undefined) {
      let protocol = "";
      try {
        protocol = new URL(String(webhook)).protocol;
      } catch {}
      if (typeof webhook !== "string" || (protocol !== "https:" && protocol !== "http:")) {
        problems.push({ type: "format", field: "webhook", description: "Must be a valid URL" });
      }
    }
    const filter = fields.webhook_events_filter;
    if (
      filter !== undefined &&
      (!Array.isArray(filter) || filter.some((e) => !EVENTS.includes(e as WebhookEvent)))
    ) {
      problems.push({
        type: "enum",
        field: "webhook_events_filter",
        description: `Must be a list of: ${EVENTS.join(", ")}`,
      });
    }
    if (problems.length > 0) return invalid(res, problems);

    let deadline: number | null = null;
    const cancelAfter = req.headers["cancel-after"];
    if (typeof cancelAfter === "string") {
      const seconds = cancelAfterSeconds(cancelAfter);
      if (seconds === null || seconds < 5) {
        return problem(
          res,
          400,
          "Bad Request",
          "Cancel-After must be a duration of at least 5 seconds, like 30s or 5m.",
        );
      }
      deadline = Date.now() + seconds * secondMs;
    }

    const prefer = req.headers.prefer;
    const wait = preferWait(typeof prefer === "string" ? prefer : undefined);
    const values = input as Record<string, unknown>;
    const id = predictionId();
    const ending = knobs.abortNext > 0 ? "abort" : knobs.failNext > 0 ? "fail" : "succeed";
    if (ending === "abort") knobs.abortNext--;
    else if (ending === "fail") knobs.failNext--;
    const requested = typeof values.duration === "number" ? values.duration : 5;
    const p: Prediction = {
      stat: {
        id,
        route,
        input: values,
        status: "starting",
        canceled: false,
        cancelRequests: 0,
        preferWaitSeconds: wait,
        webhook: typeof webhook === "string" ? webhook : null,
      },
      version,
      webhook: typeof webhook === "string" ? webhook : null,
      events: new Set(Array.isArray(filter) ? (filter as WebhookEvent[]) : EVENTS),
      status: "starting",
      logs: "",
      output: null,
      error: null,
      createdAt: Date.now(),
      startedAt: null,
      completedAt: null,
      deadline,
      fileKey: randomBytes(16).toString("hex"),
      seconds: knobs.outputSeconds ?? requested,
      malformed: knobs.malformedOutput,
      ending,
      failMessage: knobs.failMessage,
      latencyMs: knobs.latencyMs,
      steps: Math.max(1, knobs.progressSteps),
      timers: new Set(),
      onSettled: new Set(),
      lastThrottledWebhookAt: 0,
      webhookChain: Promise.resolve(),
    };
    predictions.set(id, p);
    byFileKey.set(p.fileKey, p);
    stats.predictions.set(id, p.stat);
    stats.submits++;
    run(p, knobs.queueMs);

    if (wait === null) return send(res, 201, view(p));
    // Sync mode: hold the request until the prediction ends or the wait runs out. A client that
    // hangs up does not stop the prediction.
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, wait * secondMs);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      p.onSettled.add(done);
      res.once("close", done);
      closing.signal.addEventListener("abort", done);
    });
    const settled = TERMINAL.has(p.status);
    send(res, settled ? 201 : 202, view(p), { location: `${base}/v1/predictions/${id}` });
  }

  async function status(res: ServerResponse, id: string) {
    if (knobs.hangStatus) {
      await new Promise<void>((resolve) => {
        hanging.add(resolve);
        res.once("close", resolve);
      });
      if (closing.signal.aborted) return;
    }
    const p = predictions.get(id);
    if (!p) return problem(res, 404, "Not found", "Not found.");
    send(res, 200, view(p));
  }

  function cancel(res: ServerResponse, id: string) {
    const p = predictions.get(id);
    if (!p) return problem(res, 404, "Not found", "Not found.");
    p.stat.cancelRequests++;
    // A prediction that has already ended is answered as it is.
    if (!TERMINAL.has(p.status)) {
      p.stat.canceled = true;
      finish(p, "canceled");
    }
    send(res, 200, view(p));
  }

  function list(res: ServerResponse, query: URLSearchParams) {
    const after = query.get("created_after");
    const before = query.get("created_before");
    const results = [...predictions.values()]
      .filter(
        (p) =>
          (after === null || p.createdAt >= Date.parse(after)) &&
          (before === null || p.createdAt < Date.parse(before)),
      )
      .sort((a, b) => b.createdAt - a.createdAt)
      .map(view);
    send(res, 200, { next: null, previous: null, results });
  }

  /** The output file, as replicate.delivery serves it: public, with byte ranges. */
  async function download(req: IncomingMessage, res: ServerResponse, fileKey: string) {
    const p = byFileKey.get(fileKey);
    if (p?.status !== "succeeded" || removed(p)) {
      res.writeHead(404, { "content-type": "text/plain" });
      return res.end("Not Found");
    }
    if (p.malformed === "not-a-video") {
      const junk = Buffer.from("<html><body>render worker crashed</body></html>\n".repeat(20));
      res.writeHead(200, { "content-type": "video/mp4", "content-length": junk.length });
      return res.end(req.method === "HEAD" ? undefined : junk);
    }
    const path = await testVideo(p.seconds);
    const size = (await stat(path)).size;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    let start = 0;
    let end = size - 1;
    if (range && (range[1] || range[2])) {
      if (range[1]) {
        start = Number(range[1]);
        if (range[2]) end = Math.min(Number(range[2]), size - 1);
      } else {
        start = Math.max(0, size - Number(range[2]));
      }
      if (start > end || start >= size) {
        res.writeHead(416, { "content-range": `bytes */${size}` });
        return res.end();
      }
    }
    const partial = start !== 0 || end !== size - 1;
    res.writeHead(partial ? 206 : 200, {
      "content-type": "video/mp4",
      "content-length": end - start + 1,
      "accept-ranges": "bytes",
      ...(partial ? { "content-range": `bytes ${start}-${end}/${size}` } : {}),
    });
    if (req.method === "HEAD") return res.end();
    createReadStream(path, { start, end }).pipe(res);
  }

  function kindOf(method: string, path: string): RequestKind {
    if (/^\/delivery\//.test(path)) return "download";
    if (
      method === "POST" &&
      (path === "/v1/predictions" || /^\/v1\/models\/[^/]+\/[^/]+\/predictions$/.test(path))
    ) {
      return "submit";
    }
    if (method === "GET" && /^\/v1\/predictions\/[^/]+$/.test(path)) return "status";
    if (method === "POST" && /^\/v1\/predictions\/[^/]+\/cancel$/.test(path)) return "cancel";
    if (method === "GET" && path === "/v1/predictions") return "list";
    return "other";
  }

  const aimed = (target: RequestKind | "any", kind: RequestKind) =>
    target === "any" ? kind !== "download" : target === kind;

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", base);
    const path = url.pathname;
    const kind = kindOf(method, path);
    const raw = await readBody(req);
    const body = recordedBody(raw === "too-large" ? null : raw);
    res.once("finish", () => stats.requests.push({ method, path, kind, status: res.statusCode, body }));
    if (kind === "submit") stats.submitAttempts++;
    if (kind === "status") stats.statusCalls++;
    if (kind === "cancel") stats.cancels++;
    if (kind === "download") stats.downloads++;

    if (knobs.serverErrorNext > 0 && aimed(knobs.serverErrorKind, kind)) {
      knobs.serverErrorNext--;
      const status = knobs.serverErrorStatus;
      if (status === 500) return problem(res, 500, "Internal Server Error", "An unexpected error occurred.");
      // Gateway errors come from the load balancer in front of the API, as HTML.
      const text = status === 502 ? "502 Bad Gateway" : "503 Service Temporarily Unavailable";
      res.writeHead(status, { "content-type": "text/html" });
      return res.end(
        `<html><head><title>${text}</title></head><body><center><h1>${text}</h1></center></body></html>`,
      );
    }

    const file = /^\/delivery\/xezq\/([0-9a-f]+)\/output\.mp4$/.exec(path);
    if (kind === "download" && file?.[1] && (method === "GET" || method === "HEAD")) {
      return download(req, res, file[1]);
    }
    if (!path.startsWith("/v1/")) return problem(res, 404, "Not found", "Not found.");

    const authorization = req.headers.authorization;
    if (!authorization) {
      return problem(res, 401, "Unauthenticated", "You did not pass an authentication token");
    }
    const [scheme, credential] = authorization.split(" ", 2);
    if (!/^(Bearer|Token)$/i.test(scheme ?? "") || credential !== token) {
      return problem(res, 401, "Unauthenticated", "You did not pass a valid authentication token");
    }

    if (knobs.rateLimitNext > 0 && aimed(knobs.rateLimitKind, kind)) {
      knobs.rateLimitNext--;
      const seconds = knobs.retryAfterSeconds;
      return problem(
        res,
        429,
        "Request was throttled.",
        `Request was throttled. Expected available in ${seconds} second${seconds === 1 ? "" : "s"}.`,
        { retry_after: seconds },
        { "retry-after": String(seconds) },
      );
    }

    const notAllowed = () => problem(res, 405, "Method Not Allowed", `Method "${method}" not allowed.`);
    const modelRoute = /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path);
    if (modelRoute) {
      if (method !== "POST") return notAllowed();
      if (`${modelRoute[1]}/${modelRoute[2]}` !== model) return problem(res, 404, "Not found", "Not found.");
      return create(req, res, "model", raw);
    }
    if (path === "/v1/predictions") {
      if (method === "POST") return create(req, res, "version", raw);
      if (method === "GET") return list(res, url.searchParams);
      return notAllowed();
    }
    const cancelRoute = /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(path);
    if (cancelRoute?.[1]) return method === "POST" ? cancel(res, cancelRoute[1]) : notAllowed();
    const getRoute = /^\/v1\/predictions\/([^/]+)$/.exec(path);
    if (getRoute?.[1]) return method === "GET" ? status(res, getRoute[1]) : notAllowed();
    if (path === "/v1/webhooks/default/secret") {
      return method === "GET" ? send(res, 200, { key: webhookSecret }) : notAllowed();
    }
    if (path === "/v1/account") {
      const owner = model.split("/")[0];
      return method === "GET"
        ? send(res, 200, { type: "organization", username: owner, name: owner })
        : notAllowed();
    }
    problem(res, 404, "Not found", "Not found.");
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      problem(res, 500, "Internal Server Error", String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    token,
    model,
    versionId,
    webhookSecret,
    knobs,
    stats,
    prediction: (id) => {
      const p = predictions.get(id);
      return p ? view(p) : undefined;
    },
    async close() {
      closing.abort();
      for (const p of predictions.values()) {
        for (const timer of p.timers) clearTimeout(timer);
        p.timers.clear();
      }
      releaseHanging();
      await Promise.allSettled([...predictions.values()].map((p) => p.webhookChain));
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
