/**
 * `createApp(deps)`: the Express app, kept apart from `listen`, so tests and every role build the same app.
 * Order: request id, log and timing -> probes, metrics and docs -> public files -> auth (+ rate
 * limit, + requests in progress per key) -> body (read only now, capped) -> text every store can
 * keep -> OpenAPI validation -> routes -> the one error handler. Nothing before auth reads a body.
 */
import { setMaxListeners } from "node:events";
import { existsSync } from "node:fs";
import { dirname } from "node:path";
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { consoleHtmlPath } from "@refvid/console";
import { docsHtmlPath } from "@refvid/docs";
import type { ListenHealth } from "@refvid/store";
import express, { type Express } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { cogBoxStates } from "./catalog/reachability.js";
import type { AppDeps } from "./deps.js";
import { authenticate, authenticateAdmin } from "./http/auth.js";
import { consoleHeaders } from "./http/console-headers.js";
import { Drain } from "./http/drain.js";
import { errorHandler } from "./http/error-handler.js";
import { ProbePortOnlyError, RouteNotFoundError, WorkerOnlyError } from "./http/http-errors.js";
import { limitRequestsPerKey } from "./http/key-requests.js";
import { validatePreviewBody } from "./http/preview-validator.js";
import { readJsonBody } from "./http/request-body.js";
import { requestLog } from "./http/request-log.js";
import { apiRouter } from "./http/routes/api.js";
import { filesRouter } from "./http/routes/files.js";
import { metricsRoute } from "./http/routes/metrics.js";
import { uploadRoute } from "./http/routes/uploads.js";
import { vendorHooksRoute } from "./http/routes/vendor-hooks.js";
import { openAIErrors, videosRouter } from "./http/routes/videos.js";
import { refuseUnstorableText } from "./http/text-guard.js";
import { cacheValidatorRouteLookup } from "./http/validator-route-cache.js";
import { httpMetrics } from "./metrics/http-metrics.js";

export interface AppOptions {
  /** False in a worker-only process: it answers the health probes and /metrics, nothing else. */
  serveApi?: boolean;
  /**
   * The app of REFVID_PROBE_PORT: the probes and /metrics only, like a worker's, on a server of
   * their own that the API's connection caps do not reach (docs/decisions.md, "Requests at the edge").
   */
  probePort?: boolean;
  /** Checks every response against the spec and reports each mismatch here (tests fail on any). */
  onResponseMismatch?: (error: Error) => void;
  /**
   * The process's stop: while it drains, readiness answers 503 and requests are refused; at its
   * deadline held sync submits and event streams answer now (http/drain.ts).
   */
  drain?: Drain;
  /** The store's event subscription; "reconnecting" makes the process not ready. */
  listenHealth?: () => ListenHealth;
  /** Each model vendor's reachability, by provider name; reported, never a reason to be unready. */
  providerReachability?: () => Record<string, string>;
}

/** How long readiness waits for the store to answer. */
const READY_TIMEOUT_MS = 2000;

export function createApp(deps: AppDeps, options: AppOptions = {}): Express {
  const app = express();
  app.disable("x-powered-by");
  // No ETag on API answers: hashing every body costs each request about 2% of its CPU, and no client
  // revalidates a run (static files keep theirs).
  app.set("etag", false);
  // The client's address behind the proxies REFVID_TRUST_PROXY names (req.ip).
  app.set("trust proxy", deps.config.trustProxy);
  app.use(requestLog(deps.logger, httpMetrics(deps.metrics, app)));

  const drain = options.drain ?? new Drain();
  // Every open event stream and held submit listens for the deadline: many listeners is the design.
  setMaxListeners(0, drain.deadline);
  app.use(drain.refuseWhileDraining());
  // Alive until the process exits, draining included: a liveness probe must not restart a process
  // that is finishing its held requests.
  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  app.get("/readyz", async (_req, res) => {
    let timer: NodeJS.Timeout | undefined;
    const store = await Promise.race([
      deps.store.ping().then(
        () => "ok" as const,
        () => "unavailable" as const,
      ),
      new Promise<"unavailable">((resolve) => {
        timer = setTimeout(() => resolve("unavailable"), READY_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    // Cross-process wake-ups (LISTEN/NOTIFY); a store without a connection to lose is always ok.
    const listen = options.listenHealth?.() ?? "ok";
    const ok = store === "ok" && listen === "ok" && !drain.started.aborted;
    const providers = options.providerReachability?.() ?? {};
    const boxes = cogBoxStates(deps.config.catalog?.providers ?? [], deps.config.vendorWebhooks);
    res.status(ok ? 200 : 503).json({
      status: ok ? "ok" : "unavailable",
      checks: { store, listen },
      ...(Object.keys(providers).length > 0 ? { providers } : {}),
      ...(Object.keys(boxes).length > 0 ? { boxes } : {}),
    });
  });
  // Every process serves its own metrics, a worker-only one too; no API key, so no rate limit.
  app.get("/metrics", metricsRoute(deps));
  if (options.serveApi === false || options.probePort) {
    app.use((_req, _res, next) => next(options.probePort ? new ProbePortOnlyError() : new WorkerOnlyError()));
    app.use(errorHandler(deps.logger));
    return app;
  }
  const docs = docsDirectory();
  if (docs) app.use("/docs", express.static(docs, { index: "index.html" }));
  // The web console (apps/console), when built: its files, and its page for any other path under it.
  if (existsSync(consoleHtmlPath)) {
    const headers = consoleHeaders(deps.config);
    app.use(
      "/console",
      (_req, res, next) => {
        res.set(headers);
        next();
      },
      express.static(dirname(consoleHtmlPath), { index: "index.html" }),
      (req, res, next) =>
        req.method === "GET" || req.method === "HEAD" ? res.sendFile(consoleHtmlPath) : next(),
    );
  }

  app.use(filesRouter(deps));
  // Vendors' webhooks: no API key (the URL's token and the vendor's signature instead).
  const hooks = express.Router();
  vendorHooksRoute(hooks, deps);
  app.use(hooks);
  app.use("/admin/v1", authenticateAdmin(deps));
  // The OpenAI-compatible surface: its own body readers, and errors in OpenAI's shape from the
  // first (authentication's) on.
  app.use(
    "/v1/videos",
    authenticate(deps),
    limitRequestsPerKey(deps.config.maxRequestsPerKey),
    videosRouter(deps),
    openAIErrors(deps.logger),
  );
  app.use("/v1", authenticate(deps), limitRequestsPerKey(deps.config.maxRequestsPerKey));
  // Streams its body itself, so before the JSON reader; answers in the spec's terms (FileUpload).
  app.post("/v1/files", uploadRoute(deps));
  app.use(["/v1", "/admin/v1"], readJsonBody(), refuseUnstorableText());
  // Before the OpenAPI validator, which would stop at the first problem of a discriminated body.
  app.post("/v1/pricing/preview", validatePreviewBody(deps));
  cacheValidatorRouteLookup();
  app.use(
    OpenApiValidator.middleware({
      apiSpec: loadOpenapiDocument() as never,
      validateRequests: { allErrors: true },
      validateResponses: options.onResponseMismatch ? { onError: options.onResponseMismatch } : false,
      validateSecurity: false,
      // POST /v1/files streams its own body (http/routes/uploads.ts): no multipart layer on every request.
      fileUploader: false,
      // The price preview too, though its body was checked just above: the validator also holds
      // its query and content type to the spec, and production must answer as the tests see.
      ignorePaths: /^\/(healthz|readyz|metrics|docs)/,
    }),
  );
  app.use(apiRouter(deps, drain));
  app.use((req, _res, next) => next(new RouteNotFoundError(req.method, req.path)));
  app.use(errorHandler(deps.logger));
  return app;
}

/** The built API reference (apps/docs), when it has been built. */
function docsDirectory(): string | null {
  return existsSync(docsHtmlPath) ? dirname(docsHtmlPath) : null;
}
