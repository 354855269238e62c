/**
 * Creating a Cog prediction (POST /predictions, PUT /predictions/{id}): the answers of a busy or
 * unready container, a PUT reattaching to its id in flight (202), a sync request held until the
 * prediction ended, an async one answered 202 at once, and a create of either kind whose answer is
 * lost (`loseAnswerNext`, at `loseAnswerAt`).
 * The sources are in cog-server.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { fullBody, snapshot, syncBody } from "./cog-bodies.js";
import type { CogContext } from "./cog-context.js";
import {
  type CogJob,
  type CogLossPoint,
  type CogRequest,
  type CogRequestKind,
  detail,
  type Prediction,
  send,
  WEBHOOK_EVENTS,
} from "./cog-protocol.js";
import type { requestReader } from "./cog-requests.js";
import type { PredictionLife } from "./cog-run.js";
import { type LoseAnswerAs, loseAnswer } from "./lost-answer.js";

/** The create handler over `ctx`; `block` holds Cog 0.12's server while a sync prediction runs. */
export function predictionCreator(
  ctx: CogContext,
  life: PredictionLife,
  reader: ReturnType<typeof requestReader>,
  block: (ended: Promise<void>) => void,
) {
  const { knobs, stats, inFlight, closing } = ctx;
  const { refused, parse, validate } = reader;
  const { webhook, run, cancel } = life;

  /** Refuses a new prediction the container cannot take; true when the request was answered. */
  const unavailable = (res: ServerResponse) => {
    const python = ctx.isPython();
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
    const python = ctx.isPython();
    const respondAsync = req.headers.prefer === "respond-async" && !knobs.preferDropped;

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
      while (knobs.hangStatus && !closing.aborted && !res.destroyed) await ctx.sleep(5);
      return send(res, 202, python ? fullBody(existing) : snapshot(existing, true));
    }
    if (problems.length > 0) return send(res, 422, { detail: problems });
    if (unavailable(res)) return;

    const generated = `pred_${(BigInt(Date.now()) * 1_000_000n + BigInt(ctx.next())).toString(16)}`;
    const id = pathId ?? (typeof body.id === "string" ? body.id : python ? null : generated);
    const key = id ?? `anonymous-${ctx.next()}`;
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

    const lose = knobs.loseAnswerNext > 0 ? { as: knobs.loseAnswerAs, at: knobs.loseAnswerAt } : null;
    if (lose) knobs.loseAnswerNext--;
    if (respondAsync) {
      const accepted = python ? fullBody(p) : { id, status: "starting" };
      if (!lose) return send(res, 202, accepted);
      return loseAsyncAnswer(p, res, lose);
    }
    // coglet's SyncPredictionGuard: the client gone, the prediction is cancelled.
    const clientGone = () => {
      if (!python && !p.completedAt && !p.job.cancelled) cancel(p);
    };
    res.on("close", () => {
      if (!res.writableFinished) clientGone();
    });
    /** A gateway's 502 closes its connection to Cog: Cog sees its client go, as for a drop. */
    const lost = () => {
      if (!lose || res.headersSent || res.destroyed) return;
      p.job.answerLost = true;
      p.job.lostIn = p.job.status;
      loseAnswer(res, lose.as);
      if (lose.as === "502") clientGone();
    };
    if (lose?.at === "starting" || (lose?.at === "processing" && p.job.status === "processing")) {
      lost();
    } else if (lose?.at === "processing") p.onRunning = lost;
    if (knobs.flavor === "python-0.12") block(p.ended);
    await p.ended;
    if (lose?.at === "end") lost();
    send(res, 200, python ? fullBody(p) : syncBody(p));
  };

  return create;
}

/**
 * The 202 of an async create lost on its way back, `at` a point of the prediction's life: at once,
 * once its model runs, or at its end (held that long by a path that then breaks). An async
 * prediction does not watch its client (coglet spawns it; Cog ≤ 0.16 runs it in the background):
 * it runs on whatever happens to the answer, and its webhooks go out as ever.
 */
async function loseAsyncAnswer(
  p: Prediction,
  res: ServerResponse,
  lose: { as: LoseAnswerAs; at: CogLossPoint },
) {
  const lost = () => {
    if (res.headersSent || res.destroyed) return;
    p.job.answerLost = true;
    p.job.lostIn = p.job.status;
    loseAnswer(res, lose.as);
  };
  if (lose.at === "starting" || (lose.at === "processing" && p.job.status !== "starting")) return lost();
  if (lose.at === "processing") {
    p.onRunning = lost;
    return;
  }
  await p.ended;
  lost();
}
