/**
 * A local Cog model container HTTP API (the server `cog` images run on port 5000) for adapter
 * tests, written from Cog's public documentation and source:
 * - docs/http.md in replicate/cog ("HTTP API"): POST /predictions and idempotent
 *   PUT /predictions/{id}, `Prefer: respond-async` → 202, sync → 200 with the result, cancel
 *   (200, 404 when unknown), GET /health-check statuses, 409 when every slot is busy, webhooks
 *   with `webhook_events_filter` and the 500 ms throttle, outputs as data URLs by default, and
 *   "Polling for prediction status is not currently supported" (there is no GET of a prediction).
 * - crates/coglet/src/transport/http/routes.rs, supervisor.rs, prediction.rs, webhook.rs,
 *   input_validation.rs and health.rs (coglet, the server of Cog ≥ 0.17): a PUT of an id still in
 *   flight answers 202 with its current state whatever `Prefer` says; finished predictions are
 *   forgotten (a PUT of their id starts a new one); 503 `{error, status: "failed"}` until setup
 *   succeeded; 409 `{error: "At capacity - all prediction slots busy"}`; a sync request whose
 *   client disconnects is cancelled; 422 `{detail: [{loc, msg, type}]}` for bad input (unknown
 *   input fields are dropped); terminal webhooks retried on 429/5xx with 100 ms · 2^n backoff.
 * - A model whose `Input` is given as JSON Schema (`inputSchema`) is checked as coglet checks it
 *   (crates/coglet/src/input_validation.rs: the schema with `additionalProperties: false`, findings
 *   as pydantic-style `detail` entries at `["body", "input", <field>]`, see input-refusals.ts) and a
 *   refused input is answered 422 `{detail: [...]}` before any prediction starts.
 * - python/cog/server/http.py, runner.py and schema.py (the FastAPI server of Cog ≤ 0.16), modelled
 *   by `flavor: "python"`: the full PredictionResponse in every answer (202 in status
 *   `processing`), 409 `{detail: "Already running a prediction"}` (also while setup runs),
 *   health-check without `version`, no cancel on client disconnect.
 * - The same files as Cog 0.12 shipped them (after PR #1865 "Simplify PredictionRunner", Aug 2024,
 *   before PR #2066 "End-to-end support for concurrent async models", Nov 2024), modelled by
 *   `flavor: "python-0.12"`: `async def predict_idempotent` calls `_predict`, which for a sync
 *   request waits on the prediction with `predict_task.wait()`, blocking uvicorn's event loop
 *   (issue #1719 "Health check endpoint unresponsive during predictions"; PR #2066 replaced it with
 *   `await predict_task.wait_async()`). So while a held sync prediction runs no request is served:
 *   health-checks, cancels and PUTs wait, then are served in the order they came once it ended,
 *   and a request whose client left meanwhile is never served (uvicorn hands the app
 *   `http.disconnect`). A cancel is then answered 404 (`if not runner.is_busy()`), the prediction
 *   having run to its end (docs/http.md: "Predictions cannot be canceled if they're created [...]
 *   synchronously"); a PUT of the same id, reattached only `if runner.is_busy()`, runs the model
 *   again; another prediction runs after the first (queued by uvicorn, not 409). While an async
 *   prediction runs the server is free: 409 "Already running a prediction" (`RunnerBusyError`), a
 *   PUT of its id 202, a cancel 200.
 * - A sync create whose answer is lost (`loseAnswerNext`, at `loseAnswerAt`): coglet's sync handler
 *   holds a `SyncPredictionGuard` that cancels the prediction when axum drops the request's
 *   future, i.e. when the client's connection closes (crates/coglet/src/service.rs,
 *   transport/http/routes.rs: the prediction runs in a spawned task, so it stays in flight, a PUT
 *   of its id reattaching, until the worker acknowledges the cancel, `cancelLatencyMs`). Before the
 *   model ran, a cancel is forwarded with the request (`was_cancelled_before_send`): it never runs,
 *   and is not paid; once it ran, it ends `canceled`, paid, its output given to no one. Cog ≤ 0.16
 *   (python/cog/server/http.py) does not watch the client: the prediction runs on. A "502" is a
 *   gateway's (nginx, envoy), which closes its own connection to Cog when it gives up (nginx's
 *   ngx_http_upstream_finalize_request closes the upstream connection; envoy resets the upstream
 *   stream on a timeout): Cog sees its client go exactly as for a "drop".
 * Cog has no authentication; `token` is empty and any Authorization header is ignored.
 * `rateLimitNext` (429) is not Cog's own behaviour but a fronting proxy's; Cog's own back-pressure
 * is the 409 of `slots`.
 */
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import {
  COGLET_VERSION,
  type CogJob,
  type CogKnobs,
  type CogRequest,
  type CogRequestKind,
  type CogServer,
  type CogServerOptions,
  type CogStats,
  type CogWebhookCall,
  type CogWebhookEvent,
  DEFAULT_INPUT,
  DEFAULT_KNOBS,
  detail,
  NOT_A_VIDEO,
  type Prediction,
  progressLine,
  pyTime,
  readBody,
  send,
  WEBHOOK_EVENTS,
} from "./cog-protocol.js";
import { cogRefusal } from "./input-refusals.js";
import { inputCheck } from "./input-schema.js";
import { gatewayError } from "./lost-answer.js";
import { recordedBody } from "./received.js";
import { testVideo } from "./video.js";

export type * from "./cog-protocol.js";

/** Starts a Cog prediction server on 127.0.0.1 with a random port. */
export async function startCogServer(options: CogServerOptions = {}): Promise<CogServer> {
  const knobs: CogKnobs = { ...DEFAULT_KNOBS, ...options.knobs };
  knobs.rateLimitNext = { ...knobs.rateLimitNext };
  knobs.serverErrorNext = { ...knobs.serverErrorNext };
  const schema = options.input ?? DEFAULT_INPUT;
  // coglet closes the model's Input to unknown fields.
  const checkInput = options.inputSchema
    ? inputCheck({ ...options.inputSchema, additionalProperties: false })
    : null;
  const stats: CogStats = {
    submits: 0,
    statusCalls: 0,
    healthChecks: 0,
    cancels: 0,
    conflicts: 0,
    maxRunning: 0,
    waiting: [],
    unserved: 0,
    requests: [],
    jobs: [],
    webhooks: [],
  };
  await testVideo(knobs.outputSeconds);

  const inFlight = new Map<string, Prediction>();
  const uploads = new Map<string, { path: string } | { bytes: Buffer }>();
  const webhookAborts = new AbortController();
  const serverTimers = new Set<NodeJS.Timeout>();
  const setupStartedAt = new Date();
  let setupDoneAt: Date | null = new Date();
  let closed = false;
  let sequence = 0;

  const isPython = () => knobs.flavor !== "coglet";

  const later = (fn: () => void, ms: number) => {
    const timer = setTimeout(() => {
      serverTimers.delete(timer);
      fn();
    }, ms);
    serverTimers.add(timer);
    return timer;
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => later(resolve, ms));

  if (options.setupMs && options.setupMs > 0) {
    knobs.health = "STARTING";
    setupDoneAt = null;
    later(() => {
      setupDoneAt = new Date();
      if (knobs.health === "STARTING") knobs.health = "READY";
    }, options.setupMs);
  }

  const take = (counter: Partial<Record<CogRequestKind, number>>, kind: CogRequestKind) => {
    const left = counter[kind] ?? 0;
    if (left <= 0) return false;
    counter[kind] = left - 1;
    return true;
  };
  /** Proxy-style refusals shared by every prediction route; true when the request was answered. */
  const refused = (res: ServerResponse, kind: CogRequestKind) => {
    if (take(knobs.serverErrorNext, kind)) {
      send(res, knobs.serverErrorStatus, "Internal Server Error");
      return true;
    }
    if (take(knobs.rateLimitNext, kind)) {
      send(res, 429, { detail: "Too Many Requests" }, { "retry-after": String(knobs.retryAfterSeconds) });
      return true;
    }
    return false;
  };

  // --- Prediction bodies -------------------------------------------------------------------

  const metrics = (p: Prediction) =>
    p.completedAt ? { predict_time: (p.completedAt.getTime() - p.startedAt.getTime()) / 1000 } : {};

  /** The python server's PredictionResponse, every field present. */
  const fullBody = (p: Prediction) => ({
    input: p.job.input,
    output: p.output,
    id: p.job.id,
    version: null,
    created_at: p.createdAt,
    started_at: pyTime(p.startedAt),
    completed_at: pyTime(p.completedAt),
    logs: p.job.logs,
    error: p.job.error,
    status: p.job.status,
    metrics: p.job.status === "succeeded" ? metrics(p) : null,
  });

  /** coglet's state snapshot (webhooks; with `input` for a reattaching PUT). */
  const snapshot = (p: Prediction, withInput: boolean) => ({
    id: p.job.id,
    status: p.job.status,
    ...(withInput ? { input: p.job.input } : {}),
    logs: p.job.logs,
    ...(p.output !== null ? { output: p.output } : {}),
    ...(p.job.error !== null ? { error: p.job.error } : {}),
    metrics: metrics(p),
  });

  /** coglet's answer to a sync request once the prediction ended. */
  const syncBody = (p: Prediction) => {
    const base = { id: p.job.id, logs: p.job.status === "succeeded" ? p.job.logs : "", status: p.job.status };
    if (p.job.status === "succeeded") return { ...base, output: p.output, metrics: metrics(p) };
    if (p.job.status === "failed") return { ...base, error: p.job.error, metrics: metrics(p) };
    return { ...base, metrics: metrics(p) };
  };

  // --- Webhooks ------------------------------------------------------------------------------

  const postWebhook = async (
    p: Prediction,
    event: CogWebhookEvent,
    body: unknown,
    attempt: number,
  ): Promise<number | "error"> => {
    const call: CogWebhookCall = { id: p.job.id, event, attempt, status: p.job.status, answer: null };
    stats.webhooks.push(call);
    try {
      const answer = await fetch(p.webhook?.url ?? "", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "user-agent": knobs.flavor === "coglet" ? `coglet/${COGLET_VERSION}` : "cog-worker/0.16.0",
        },
        body: JSON.stringify(body),
        signal: webhookAborts.signal,
      });
      await answer.arrayBuffer();
      call.answer = answer.status;
      return answer.status;
    } catch {
      call.answer = "error";
      return "error";
    }
  };

  const webhook = (p: Prediction, event: CogWebhookEvent) => {
    if (!p.webhook?.events.has(event) || closed) return;
    const body = isPython() ? fullBody(p) : snapshot(p, false);
    if (event !== "completed") {
      if (Date.now() - p.webhook.lastSentAt < knobs.webhookIntervalMs) return;
      p.webhook.lastSentAt = Date.now();
      void postWebhook(p, event, body, 1);
      return;
    }
    void (async () => {
      for (let attempt = 1; !closed; attempt++) {
        const answer = await postWebhook(p, event, body, attempt);
        const retryable = answer === "error" || [429, 500, 502, 503, 504].includes(answer);
        if (!retryable || attempt > knobs.webhookMaxRetries) return;
        await sleep(knobs.webhookRetryBaseMs * 2 ** Math.min(attempt, 10));
      }
    })();
  };

  // --- The model -----------------------------------------------------------------------------

  const finish = (
    p: Prediction,
    status: "succeeded" | "failed" | "canceled",
    error: string | null = null,
  ) => {
    if (p.completedAt) return;
    for (const timer of p.timers) clearTimeout(timer);
    p.job.status = status;
    p.job.error = error;
    p.completedAt = new Date();
    if (inFlight.get(p.key) === p) inFlight.delete(p.key);
    webhook(p, "completed");
    p.end();
  };

  const makeOutput = async (): Promise<string> => {
    const seq = ++sequence;
    const bytes = knobs.malformedOutput ? NOT_A_VIDEO : null;
    const path = await testVideo(knobs.outputSeconds);
    if (knobs.outputAs === "data") {
      return `data:video/mp4;base64,${(bytes ?? (await readFile(path))).toString("base64")}`;
    }
    uploads.set(String(seq), bytes ? { bytes } : { path });
    return `${base}/uploads/${seq}/output.mp4`;
  };

  /** The model's last step: it raises (`failNext`) or returns the video. */
  const conclude = (p: Prediction) => {
    if (p.willFail) {
      p.job.logs += `Traceback (most recent call last):\n  File "/src/predict.py", line 48, in predict\n    video = self.pipe(prompt)\ntorch.OutOfMemoryError: ${knobs.failMessage}\n`;
      finish(p, "failed", knobs.failMessage);
      return;
    }
    void makeOutput().then((output) => {
      if (p.completedAt) return;
      p.output = output;
      p.job.output = output;
      finish(p, "succeeded");
    });
  };

  const run = (p: Prediction) => {
    const { latencyMs, progressSteps: steps } = knobs;
    p.timers.push(
      later(() => {
        if (p.completedAt || p.job.cancelled) return;
        p.job.status = "processing";
        p.job.paid = true;
        p.onRunning?.();
        if (knobs.flavor === "coglet") webhook(p, "start");
        for (let step = 0; step <= steps; step++) {
          p.timers.push(
            later(
              () => {
                if (p.completedAt) return;
                p.job.logs += progressLine(step, steps);
                webhook(p, "logs");
                if (step === steps) conclude(p);
              },
              (latencyMs * step) / steps,
            ),
          );
        }
      }, knobs.queueMs),
    );
  };

  const cancel = (p: Prediction) => {
    p.job.cancelled = true;
    p.job.cancelledIn = p.job.status;
    if (knobs.cancelLatencyMs <= 0) finish(p, "canceled");
    else later(() => finish(p, "canceled"), knobs.cancelLatencyMs);
  };

  // --- Requests ------------------------------------------------------------------------------

  type Parsed = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; body: unknown };

  const parse = (text: string, bodyRequired: boolean): Parsed => {
    const python = isPython();
    if (text.trim() === "") {
      if (python && bodyRequired) {
        return { ok: false, status: 422, body: { detail: [detail(["body"], "Field required", "missing")] } };
      }
      return { ok: true, body: {} };
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      if (!python) {
        return { ok: false, status: 400, body: `Failed to parse the request body as JSON: ${String(error)}` };
      }
      return {
        ok: false,
        status: 422,
        body: { detail: [detail(["body", 0], "JSON decode error", "json_invalid")] },
      };
    }
    const problems: ReturnType<typeof detail>[] = [];
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      problems.push(detail(["body"], "Input should be a valid dictionary", "dict_type"));
    } else {
      const b = body as Record<string, unknown>;
      if (b.id !== undefined && b.id !== null && typeof b.id !== "string") {
        problems.push(detail(["body", "id"], "Input should be a valid string", "string_type"));
      }
      if (b.webhook !== undefined && b.webhook !== null && typeof b.webhook !== "string") {
        problems.push(detail(["body", "webhook"], "Input should be a valid URL", "url_type"));
      }
      const filter = b.webhook_events_filter;
      if (filter !== undefined && filter !== null) {
        const events = Array.isArray(filter) ? filter : [filter];
        events.forEach((e, i) => {
          if (!WEBHOOK_EVENTS.includes(e as CogWebhookEvent)) {
            problems.push(
              detail(
                ["body", "webhook_events_filter", i],
                "Input should be 'start', 'output', 'logs' or 'completed'",
                "enum",
              ),
            );
          }
        });
      }
    }
    if (problems.length > 0) {
      if (!python) {
        const msg = `Failed to deserialize the JSON body into the target type: ${problems[0]?.loc.join(".")}`;
        return { ok: false, status: 422, body: msg };
      }
      return { ok: false, status: 422, body: { detail: problems } };
    }
    return { ok: true, body: body as Record<string, unknown> };
  };

  /** The model's Input: unknown fields dropped, missing and mistyped ones reported pydantic-style. */
  const validate = (
    given: unknown,
  ): { input: Record<string, unknown>; problems: ReturnType<typeof detail>[] } => {
    const raw = given ?? {};
    if (checkInput) {
      const problems = cogRefusal(checkInput(raw));
      return {
        input: typeof raw === "object" && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {},
        problems,
      };
    }
    if (typeof raw !== "object" || Array.isArray(raw)) {
      return {
        input: {},
        problems: [detail(["body", "input"], "Input should be a valid dictionary", "dict_type")],
      };
    }
    const input: Record<string, unknown> = {};
    const problems: ReturnType<typeof detail>[] = [];
    for (const [name, field] of Object.entries(schema.properties)) {
      const value = (raw as Record<string, unknown>)[name];
      if (value === undefined) continue;
      input[name] = value;
      const ok =
        field.type === "integer"
          ? Number.isInteger(value)
          : field.type === "array"
            ? Array.isArray(value)
            : field.type === "object"
              ? typeof value === "object" && value !== null && !Array.isArray(value)
              : typeof value === field.type;
      if (!ok)
        problems.push(
          detail(
            ["body", "input", name],
            `${JSON.stringify(value)} is not of type "${field.type}"`,
            "value_error",
          ),
        );
      else if (field.enum && !field.enum.includes(value)) {
        problems.push(
          detail(
            ["body", "input", name],
            `${JSON.stringify(value)} is not one of ${JSON.stringify(field.enum)}`,
            "value_error",
          ),
        );
      }
    }
    for (const name of schema.required) {
      if (input[name] === undefined)
        problems.push(detail(["body", "input", name], "Field required", "value_error.missing"));
    }
    return { input, problems };
  };

  /** Refuses a new prediction the container cannot take; true when the request was answered. */
  const unavailable = (res: ServerResponse) => {
    const python = isPython();
    const busyBody = python
      ? { detail: "Already running a prediction" }
      : { error: "At capacity - all prediction slots busy", status: "failed" };
    if (knobs.health === "STARTING" && python) {
      send(res, 409, busyBody);
      return true;
    }
    if (knobs.health === "STARTING" || knobs.health === "SETUP_FAILED" || knobs.health === "DEFUNCT") {
      if (python) send(res, 500, "Internal Server Error");
      else send(res, 503, { error: "Predictor not ready", status: "failed" });
      return true;
    }
    if (inFlight.size >= knobs.slots) {
      stats.conflicts++;
      send(res, 409, busyBody);
      return true;
    }
    return false;
  };

  const create = async (
    req: IncomingMessage,
    res: ServerResponse,
    via: "PUT" | "POST",
    pathId: string | null,
    received: CogRequest,
  ) => {
    const kind: CogRequestKind = pathId !== null && inFlight.has(pathId) ? "status" : "submit";
    received.kind = kind;
    if (refused(res, kind)) return;
    const parsed = parse(received.text, via === "PUT");
    if (!parsed.ok) return send(res, parsed.status, parsed.body);
    const body = parsed.body;
    const python = isPython();
    const respondAsync = req.headers.prefer === "respond-async";

    if (!python && (req.headers.accept ?? "").includes("text/event-stream")) {
      return send(res, 406, { detail: "This model does not support streaming output" });
    }
    const { input, problems } = validate(body.input);
    if (python && problems.length > 0) return send(res, 422, { detail: problems });
    if (pathId !== null && typeof body.id === "string" && body.id !== pathId) {
      return send(res, 422, {
        detail: [
          detail(["body", "id"], "prediction ID must match the ID supplied in the URL", "value_error"),
        ],
      });
    }
    const existing = pathId !== null ? inFlight.get(pathId) : undefined;
    if (existing) {
      stats.statusCalls++;
      while (knobs.hangStatus && !closed && !res.destroyed) await sleep(5);
      return send(res, 202, python ? fullBody(existing) : snapshot(existing, true));
    }
    if (problems.length > 0) return send(res, 422, { detail: problems });
    if (unavailable(res)) return;

    const generated = `pred_${(BigInt(Date.now()) * 1_000_000n + BigInt(++sequence)).toString(16)}`;
    const id = pathId ?? (typeof body.id === "string" ? body.id : python ? null : generated);
    const key = id ?? `anonymous-${++sequence}`;
    const events = Array.isArray(body.webhook_events_filter)
      ? new Set(body.webhook_events_filter as string[])
      : new Set<string>(WEBHOOK_EVENTS);
    const job: CogJob = {
      id,
      input,
      via,
      async: respondAsync,
      webhook: typeof body.webhook === "string" ? body.webhook : null,
      status: python ? "processing" : "starting",
      cancelled: false,
      cancelledIn: null,
      paid: python,
      answerLost: false,
      lostIn: null,
      error: null,
      output: null,
      logs: "",
    };
    let end = () => {};
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    const p: Prediction = {
      key,
      job,
      createdAt: typeof body.created_at === "string" ? body.created_at : null,
      startedAt: new Date(),
      completedAt: null,
      output: null,
      willFail: knobs.failNext > 0,
      webhook: job.webhook ? { url: job.webhook, events, lastSentAt: 0 } : null,
      timers: [],
      onRunning: null,
      ended,
      end,
    };
    if (p.willFail) knobs.failNext--;
    stats.submits++;
    stats.jobs.push(job);
    inFlight.set(key, p);
    stats.maxRunning = Math.max(stats.maxRunning, inFlight.size);
    if (python) webhook(p, "start");
    run(p);

    if (respondAsync) return send(res, 202, python ? fullBody(p) : { id, status: "starting" });
    // coglet's SyncPredictionGuard: the client gone, the prediction is cancelled.
    const clientGone = () => {
      if (!python && !p.completedAt && !p.job.cancelled) cancel(p);
    };
    res.on("close", () => {
      if (!res.writableFinished) clientGone();
    });
    const lose = knobs.loseAnswerNext > 0 ? { as: knobs.loseAnswerAs, at: knobs.loseAnswerAt } : null;
    if (lose) knobs.loseAnswerNext--;
    const loseAnswer = () => {
      if (!lose || res.headersSent || res.destroyed) return;
      p.job.answerLost = true;
      p.job.lostIn = p.job.status;
      if (lose.as === "drop") return res.destroy();
      gatewayError(res, 502);
      clientGone();
    };
    if (lose?.at === "starting" || (lose?.at === "processing" && p.job.status === "processing")) {
      loseAnswer();
    } else if (lose?.at === "processing") p.onRunning = loseAnswer;
    if (knobs.flavor === "python-0.12") block(p.ended);
    await p.ended;
    if (lose?.at === "end") loseAnswer();
    send(res, 200, python ? fullBody(p) : syncBody(p));
  };

  const health = async (res: ServerResponse) => {
    stats.healthChecks++;
    while (knobs.hangHealth && !closed && !res.destroyed) await sleep(5);
    const busy = knobs.health === "READY" && inFlight.size >= knobs.slots;
    const status = busy ? "BUSY" : knobs.health;
    const python = isPython();
    const setup =
      knobs.health === "STARTING"
        ? python
          ? {}
          : { started_at: pyTime(setupStartedAt), status: "starting" }
        : {
            started_at: pyTime(setupStartedAt),
            completed_at: pyTime(setupDoneAt ?? setupStartedAt),
            status: knobs.health === "SETUP_FAILED" ? "failed" : "succeeded",
            logs:
              knobs.health === "SETUP_FAILED"
                ? 'Traceback (most recent call last):\n  File "/src/predict.py", line 12, in setup\nRuntimeError: weights not found\n'
                : "",
          };
    if (python) return send(res, 200, { status, setup });
    send(res, 200, {
      status,
      setup,
      version: { coglet: COGLET_VERSION, cog: COGLET_VERSION, python: "3.12.8" },
      ...(knobs.health === "UNHEALTHY" ? { user_healthcheck_error: "healthcheck returned False" } : {}),
    });
  };

  const notFound = (res: ServerResponse) =>
    isPython() ? send(res, 404, { detail: "Not Found" }) : send(res, 404, undefined);
  const notAllowed = (res: ServerResponse, allow: string) =>
    isPython()
      ? send(res, 405, { detail: "Method Not Allowed" }, { allow })
      : send(res, 405, undefined, { allow });

  const route = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    const path = new URL(req.url ?? "/", base).pathname;
    const method = req.method ?? "GET";
    const received: CogRequest = { method, path, kind: "other", status: 0, body: recordedBody(text), text };
    res.once("finish", () => {
      const { text: _, ...request } = received;
      stats.requests.push({ ...request, status: res.statusCode });
    });
    const segments = path.split("/").filter(Boolean).map(decodeURIComponent);
    const [first, second, third] = segments;

    if (path === "/health-check") {
      received.kind = "health";
      return method === "GET" ? health(res) : notAllowed(res, "GET");
    }
    if (path === "/") {
      return send(res, 200, {
        cog_version: COGLET_VERSION,
        docs_url: "/docs",
        openapi_url: "/openapi.json",
        shutdown_url: "/shutdown",
        healthcheck_url: "/health-check",
        predictions_url: "/predictions",
        predictions_idempotent_url: "/predictions/{prediction_id}",
        predictions_cancel_url: "/predictions/{prediction_id}/cancel",
      });
    }
    if (path === "/openapi.json") {
      return send(res, 200, {
        openapi: "3.0.2",
        info: { title: "Cog", version: "0.1.0" },
        paths: {},
        components: {
          schemas: {
            Input: {
              type: "object",
              title: "Input",
              ...(options.inputSchema ?? { properties: schema.properties, required: schema.required }),
            },
            Output: { type: "string", format: "uri", title: "Output" },
          },
        },
      });
    }
    if (first === "uploads" && segments.length === 3 && (method === "GET" || method === "HEAD")) {
      const upload = uploads.get(second ?? "");
      if (!upload) return notFound(res);
      const bytes = "bytes" in upload ? upload.bytes : await readFile(upload.path);
      res.writeHead(200, { "content-type": "video/mp4", "content-length": bytes.length });
      return res.end(method === "HEAD" ? undefined : bytes);
    }
    if (first !== "predictions") return notFound(res);
    if (segments.length === 1)
      return method === "POST" ? create(req, res, "POST", null, received) : notAllowed(res, "POST");
    if (segments.length === 2)
      return method === "PUT" ? create(req, res, "PUT", second ?? "", received) : notAllowed(res, "PUT");
    if (segments.length === 3 && third === "cancel") {
      received.kind = "cancel";
      if (method !== "POST") return notAllowed(res, "POST");
      if (refused(res, "cancel")) return;
      const p = [...inFlight.values()].find((candidate) => candidate.job.id === second);
      if (!p) return send(res, 404, {});
      stats.cancels++;
      if (!p.job.cancelled) cancel(p);
      return send(res, 200, {});
    }
    return notFound(res);
  };

  // --- Cog 0.12's blocked event loop ------------------------------------------------------------

  /** Ends when the held sync prediction blocking the server ends; null while nothing blocks. */
  let blocking: Promise<void> | null = null;
  /** Requests are served one at a time, in order: each waits for the one before to answer or block. */
  let queue: Promise<void> = Promise.resolve();
  let yieldTurn = () => {};

  const block = (ended: Promise<void>) => {
    const current: Promise<void> = ended.then(() => {
      if (blocking === current) blocking = null;
    });
    blocking = current;
    yieldTurn();
  };

  /** Waits for the server's turn (0.12 only); false when the client left meanwhile. */
  const admit = async (req: IncomingMessage, res: ServerResponse): Promise<boolean> => {
    if (knobs.flavor !== "python-0.12" && !blocking) return true;
    const before = queue;
    let turnOver = () => {};
    queue = new Promise<void>((resolve) => {
      turnOver = resolve;
    });
    const request = `${req.method} ${req.url}`;
    stats.waiting.push(request);
    await before;
    while (blocking) await blocking;
    stats.waiting.splice(stats.waiting.indexOf(request), 1);
    if (closed || res.destroyed) {
      stats.unserved++;
      turnOver();
      return false;
    }
    yieldTurn = turnOver;
    res.once("close", turnOver);
    return true;
  };

  const server = createServer((req, res) => {
    // The kernel takes a request in while the server is blocked: its body is read at once.
    readBody(req)
      .then(async (text) => {
        if (await admit(req, res)) await route(req, res, text);
      })
      .catch((error: unknown) => send(res, 500, `Internal Server Error: ${String(error)}`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url: base,
    token: "",
    knobs,
    stats,
    jobsFor: (id) => stats.jobs.filter((job) => job.id === id),
    finishNow(id) {
      for (const p of inFlight.values()) {
        if (id !== undefined && p.job.id !== id) continue;
        for (const timer of p.timers) clearTimeout(timer);
        p.job.status = "processing";
        conclude(p);
      }
    },
    async close() {
      closed = true;
      webhookAborts.abort();
      for (const timer of serverTimers) clearTimeout(timer);
      serverTimers.clear();
      for (const p of inFlight.values()) p.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
