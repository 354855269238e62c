/**
 * `POST /v1/models/{owner}/{name}/predictions` and `POST /v1/predictions`: the request checked as
 * Replicate's API checks it, then a new prediction started; the sources are in replicate-server.ts.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { replicateRefusal } from "./input-refusals.js";
import { loseAnswer } from "./lost-answer.js";
import {
  cancelAfterSeconds,
  DEFAULT_EVENTS,
  EVENTS,
  type InvalidField,
  invalid,
  type Prediction,
  predictionId,
  preferWait,
  problem,
  send,
  TERMINAL,
  type WebhookEvent,
} from "./replicate-protocol.js";
import type { predictionRunner, ReplicateContext } from "./replicate-run.js";

/** The create handler over `ctx`, starting predictions with `runner`. */
export function predictionCreator(ctx: ReplicateContext, runner: ReturnType<typeof predictionRunner>) {
  const { knobs, stats, predictions, byFileKey, model, versionId, secondMs, checkInput } = ctx;
  const { view, run } = runner;

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
        answerLost: false,
        webhookDropped: typeof webhook === "string" && knobs.dropWebhooksNext > 0,
        paid: false,
      },
      version,
      webhook: typeof webhook === "string" ? webhook : null,
      events: new Set(Array.isArray(filter) ? (filter as WebhookEvent[]) : DEFAULT_EVENTS),
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
    if (p.stat.webhookDropped) knobs.dropWebhooksNext--;
    predictions.set(id, p);
    byFileKey.set(p.fileKey, p);
    stats.predictions.set(id, p.stat);
    stats.submits++;
    run(p, knobs.queueMs);
    if (knobs.loseAnswerNext > 0) {
      knobs.loseAnswerNext--;
      p.stat.answerLost = true;
      return loseAnswer(res, knobs.loseAnswerAs);
    }

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
      ctx.closing.addEventListener("abort", done);
    });
    const settled = TERMINAL.has(p.status);
    send(res, settled ? 201 : 202, view(p), { location: `${ctx.base()}/v1/predictions/${id}` });
  }

  return create;
}
