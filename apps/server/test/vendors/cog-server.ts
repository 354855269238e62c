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
 * - An async create (`Prefer: respond-async`) whose 202 is lost, at once or held by the path until
 *   the model runs or the prediction ended: the prediction is not tied to its request (coglet
 *   spawns it and answers; Cog ≤ 0.16 runs it in the background), so it runs on, its webhooks go
 *   out, and a PUT of its id while it is in flight reattaches (docs/http.md: "if a client calls
 *   this endpoint more than once with the same ID (for example, due to a network interruption)
 *   while the prediction is still running, no new prediction is created").
 * The parts: cog-routes.ts (routes), cog-requests.ts (reading a request), cog-create.ts (creating,
 * lost answers), cog-run.ts (a prediction's life), cog-webhooks.ts, cog-bodies.ts (answer bodies),
 * cog-blocking.ts (Cog 0.12's blocked event loop), cog-context.ts (what they share).
 * Cog has no authentication; `token` is empty and any Authorization header is ignored.
 * `rateLimitNext` (429) is not Cog's own behaviour but a fronting proxy's; Cog's own back-pressure
 * is the 409 of `slots`.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { blockingLoop } from "./cog-blocking.js";
import type { CogContext, CogUpload } from "./cog-context.js";
import { predictionCreator } from "./cog-create.js";
import {
  type CogKnobs,
  type CogServer,
  type CogServerOptions,
  type CogStats,
  DEFAULT_INPUT,
  DEFAULT_KNOBS,
  type Prediction,
  readBody,
  send,
} from "./cog-protocol.js";
import { requestReader } from "./cog-requests.js";
import { cogRoutes } from "./cog-routes.js";
import { predictionLife } from "./cog-run.js";
import { inputCheck } from "./input-schema.js";
import { testVideo } from "./video.js";

export type * from "./cog-protocol.js";

/** Starts a Cog prediction server on 127.0.0.1 with a random port. */
export async function startCogServer(options: CogServerOptions = {}): Promise<CogServer> {
  const knobs: CogKnobs = { ...DEFAULT_KNOBS, ...options.knobs };
  knobs.rateLimitNext = { ...knobs.rateLimitNext };
  knobs.serverErrorNext = { ...knobs.serverErrorNext };
  knobs.webhookDropNext = { ...knobs.webhookDropNext };
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
  const closing = new AbortController();
  const serverTimers = new Set<NodeJS.Timeout>();
  let sequence = 0;
  let base = "";

  const later = (fn: () => void, ms: number) => {
    const timer = setTimeout(() => {
      serverTimers.delete(timer);
      fn();
    }, ms);
    serverTimers.add(timer);
    return timer;
  };
  const ctx: CogContext = {
    knobs,
    stats,
    options,
    schema: options.input ?? DEFAULT_INPUT,
    // coglet closes the model's Input to unknown fields.
    checkInput: options.inputSchema
      ? inputCheck({ ...options.inputSchema, additionalProperties: false })
      : null,
    inFlight,
    uploads: new Map<string, CogUpload>(),
    setup: { startedAt: new Date(), doneAt: new Date() },
    closing: closing.signal,
    later,
    sleep: (ms) => new Promise<void>((resolve) => later(resolve, ms)),
    isPython: () => knobs.flavor !== "coglet",
    next: () => ++sequence,
    base: () => base,
  };

  if (options.setupMs && options.setupMs > 0) {
    knobs.health = "STARTING";
    ctx.setup.doneAt = null;
    later(() => {
      ctx.setup.doneAt = new Date();
      if (knobs.health === "STARTING") knobs.health = "READY";
    }, options.setupMs);
  }

  const life = predictionLife(ctx);
  const reader = requestReader(ctx);
  const { block, admit } = blockingLoop(ctx);
  const route = cogRoutes(ctx, life, reader, predictionCreator(ctx, life, reader, block));

  const server = createServer((req, res) => {
    // The kernel takes a request in while the server is blocked: its body is read at once.
    readBody(req)
      .then(async (text) => {
        if (await admit(req, res)) await route(req, res, text);
      })
      .catch((error: unknown) => send(res, 500, `Internal Server Error: ${String(error)}`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

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
        life.conclude(p);
      }
    },
    async close() {
      closing.abort();
      for (const timer of serverTimers) clearTimeout(timer);
      serverTimers.clear();
      for (const p of inFlight.values()) p.end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
