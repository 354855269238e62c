/**
 * The routes of a Cog server: GET /health-check, the index and OpenAPI documents, served uploads,
 * and the prediction routes (create, reattach, cancel); the sources are in cog-server.ts.
 */
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CogContext } from "./cog-context.js";
import type { predictionCreator } from "./cog-create.js";
import { COGLET_VERSION, type CogRequest, pyTime, send } from "./cog-protocol.js";
import type { requestReader } from "./cog-requests.js";
import type { PredictionLife } from "./cog-run.js";
import { recordedBody } from "./received.js";

/** The server's router over `ctx`. */
export function cogRoutes(
  ctx: CogContext,
  life: PredictionLife,
  reader: ReturnType<typeof requestReader>,
  create: ReturnType<typeof predictionCreator>,
) {
  const { knobs, stats, inFlight, closing, schema } = ctx;
  const { refused } = reader;
  const { cancel } = life;

  const health = async (res: ServerResponse) => {
    stats.healthChecks++;
    while (knobs.hangHealth && !closing.aborted && !res.destroyed) await ctx.sleep(5);
    const busy = knobs.health === "READY" && inFlight.size >= knobs.slots;
    const status = busy ? "BUSY" : knobs.health;
    const python = ctx.isPython();
    const setup =
      knobs.health === "STARTING"
        ? python
          ? {}
          : { started_at: pyTime(ctx.setup.startedAt), status: "starting" }
        : {
            started_at: pyTime(ctx.setup.startedAt),
            completed_at: pyTime(ctx.setup.doneAt ?? ctx.setup.startedAt),
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
    ctx.isPython() ? send(res, 404, { detail: "Not Found" }) : send(res, 404, undefined);
  const notAllowed = (res: ServerResponse, allow: string) =>
    ctx.isPython()
      ? send(res, 405, { detail: "Method Not Allowed" }, { allow })
      : send(res, 405, undefined, { allow });

  const route = async (req: IncomingMessage, res: ServerResponse, text: string) => {
    const path = new URL(req.url ?? "/", ctx.base()).pathname;
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
              ...(ctx.options.inputSchema ?? { properties: schema.properties, required: schema.required }),
            },
            Output: { type: "string", format: "uri", title: "Output" },
          },
        },
      });
    }
    if (first === "uploads" && segments.length === 3 && (method === "GET" || method === "HEAD")) {
      const upload = ctx.uploads.get(second ?? "");
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

  return route;
}
