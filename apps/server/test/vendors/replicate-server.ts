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
 *   by the base64 part of a `whsec_` secret). Without `webhook_events_filter` the events are
 *   output and completed (predictions.create: "whenever there are new outputs or the prediction
 *   has finished"). A prediction shows its `webhook` and `webhook_events_filter`, as
 *   replicate-javascript's `Prediction` type has them.
 * - predictions.list in the HTTP API reference: newest first, 100 a page, `next` / `previous`,
 *   `created_after` ("at or after") and `created_before` ("before") in ISO 8601; its example lists
 *   predictions without `logs` or `webhook` (replicate-routes.ts).
 * - replicate-python `ReplicateError` (RFC 7807 problem details) and replicate/replicate-python#47
 *   (401 `Unauthenticated` bodies; 422 "Invalid version or not permitted"); replicate-javascript
 *   `withAutomaticRetries` (Retry-After in seconds) and `parseProgressFromLogs` (tqdm lines).
 * - Inputs a model's schema refuses (`inputSchemas`): the create itself is refused, as the API
 *   validates inputs (replicate/replicate-python#26, 2024-09: "Prediction inputs are now validated
 *   by the API"), with 422 problem details titled "Input validation failed" whose `invalid_fields`
 *   are `{type, field, description}` (replicate.com/changelog/2024-05-01-improved-validation-for-
 *   api-prediction-payloads), worded as that example's validator words them (input-refusals.ts).
 * Replicate offers no idempotency key: every accepted create is a new prediction.
 *
 * Here: auth, the error knobs and routing; replicate-create.ts creates, replicate-run.ts runs a
 * prediction and sends its webhooks, replicate-routes.ts gets, cancels, lists and serves files,
 * replicate-protocol.ts holds the data and the protocol's small pieces.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { inputCheck } from "./input-schema.js";
import { gatewayError, whenAnswered } from "./lost-answer.js";
import { recordedBody } from "./received.js";
import { predictionCreator } from "./replicate-create.js";
import {
  defaultKnobs,
  type Prediction,
  problem,
  type ReplicateKnobs,
  type ReplicateServer,
  type ReplicateServerOptions,
  type ReplicateStats,
  type RequestKind,
  readBody,
  send,
} from "./replicate-protocol.js";
import { predictionRoutes } from "./replicate-routes.js";
import { predictionRunner } from "./replicate-run.js";

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
  const ctx = {
    knobs,
    stats,
    predictions,
    byFileKey,
    hanging,
    model,
    versionId,
    secondMs,
    listPageSize: options.listPageSize ?? 100,
    checkInput,
    closing: closing.signal,
    base: () => base,
  };
  const runner = predictionRunner(ctx, { key: webhookKey, retryDelaysMs: retryDelays });
  const create = predictionCreator(ctx, runner);
  const { status, cancel, list, download } = predictionRoutes(ctx, runner);

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
    whenAnswered(res, (status) => stats.requests.push({ method, path, kind, status, body }));
    if (kind === "submit") stats.submitAttempts++;
    if (kind === "status") stats.statusCalls++;
    if (kind === "cancel") stats.cancels++;
    if (kind === "download") stats.downloads++;

    if (knobs.serverErrorNext > 0 && aimed(knobs.serverErrorKind, kind)) {
      knobs.serverErrorNext--;
      const status = knobs.serverErrorStatus;
      if (status === 500) return problem(res, 500, "Internal Server Error", "An unexpected error occurred.");
      // Gateway errors come from the load balancer in front of the API, as HTML.
      return gatewayError(res, status);
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
      return p ? runner.view(p) : undefined;
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
