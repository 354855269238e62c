import type { IncomingMessage, ServerResponse } from "node:http";
import type { JsonSchema } from "./input-schema.js";
import type { LoseAnswerAs } from "./lost-answer.js";
import type { ReceivedRequest } from "./received.js";

/**
 * coglet (Cog ≥ 0.17), the FastAPI server of Cog ≤ 0.16, or that server as Cog 0.12 ran it: a held
 * sync prediction blocks the whole server until it ends (see cog-server.ts).
 */
export type CogFlavor = "coglet" | "python" | "python-0.12";
/** The health a container reports; BUSY is derived from `slots`. */
export type CogHealth = "STARTING" | "READY" | "SETUP_FAILED" | "DEFUNCT" | "UNHEALTHY";
export type CogStatus = "starting" | "processing" | "succeeded" | "failed" | "canceled";
export type CogRequestKind = "submit" | "status" | "cancel";
export type CogWebhookEvent = "start" | "output" | "logs" | "completed";
/**
 * When a sync create's answer is lost: at once (the prediction still `starting`, its model not
 * run), once its model runs (`processing`), or at its end (the answer written, then lost).
 */
export type CogLossPoint = "starting" | "processing" | "end";

export interface CogKnobs {
  flavor: CogFlavor;
  health: CogHealth;
  /** Predictions that may run at once (`concurrency.max`); one more gets 409. */
  slots: number;
  /** Time a prediction spends before the model runs (input download, slot hand-off). */
  queueMs: number;
  /** Time the model runs, logging tqdm-style progress along the way. */
  latencyMs: number;
  progressSteps: number;
  /** The next N predictions created fail with `failMessage` (the model raised). */
  failNext: number;
  failMessage: string;
  /**
   * Time from an accepted cancel to the prediction ending `canceled` (coglet keeps it in flight
   * until the worker acknowledges). One cancelled while `starting` never runs its model.
   */
  cancelLatencyMs: number;
  /** The next N requests of each kind answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext: Partial<Record<CogRequestKind, number>>;
  retryAfterSeconds: number;
  /** The next N requests of each kind answer `serverErrorStatus` "Internal Server Error". */
  serverErrorNext: Partial<Record<CogRequestKind, number>>;
  serverErrorStatus: number;
  /** A PUT that reattaches to a prediction in flight gets no answer until this is cleared. */
  hangStatus: boolean;
  /**
   * The next N sync creates create and start their prediction, then lose their answer at
   * `loseAnswerAt`: the client's connection is destroyed ("drop"), or a gateway in front answers
   * 502 and closes its own connection to Cog ("502"). Either way Cog sees its client go: coglet
   * cancels the prediction, Cog ≤ 0.16 runs it on (see cog-server.ts).
   */
  loseAnswerNext: number;
  loseAnswerAs: LoseAnswerAs;
  loseAnswerAt: CogLossPoint;
  /** GET /health-check gets no answer until this is cleared. */
  hangHealth: boolean;
  /** While set, a model that has run its course does not end (a test holds it to see it running). */
  holdEnd: boolean;
  /**
   * A proxy in front drops the `Prefer` header (as a Cog without async predictions would ignore it):
   * every create is sync.
   */
  preferDropped: boolean;
  /** The output claims to be an MP4 but is not one. */
  malformedOutput: boolean;
  outputSeconds: number;
  /** "data": base64 `data:` URL (Cog's default); "url": uploaded and served by this server. */
  outputAs: "url" | "data";
  /** Non-terminal webhooks closer together than this are dropped (Cog: 500 ms). */
  webhookIntervalMs: number;
  /** Terminal webhook retry backoff base and count (Cog: 100 ms, 12). */
  webhookRetryBaseMs: number;
  webhookMaxRetries: number;
  /**
   * The next N webhook deliveries of each event are lost on the way (the connection breaks before
   * the receiver reads them): Cog sees an error, and retries a terminal one with its backoff.
   */
  webhookDropNext: Partial<Record<CogWebhookEvent, number>>;
}

export interface CogJob {
  /** The prediction id as answered (null for an id-less POST on the python server). */
  readonly id: string | null;
  readonly input: Record<string, unknown>;
  readonly via: "PUT" | "POST";
  readonly async: boolean;
  readonly webhook: string | null;
  status: CogStatus;
  /** A cancel was accepted, and the status the prediction had when it arrived. */
  cancelled: boolean;
  cancelledIn: CogStatus | null;
  /** The model started running (the prediction left `starting`), whatever happened after. */
  paid: boolean;
  /** The create's answer was lost (`loseAnswerNext`), and the prediction's status then. */
  answerLost: boolean;
  lostIn: CogStatus | null;
  error: string | null;
  output: string | null;
  logs: string;
}

export interface CogWebhookCall {
  id: string | null;
  event: CogWebhookEvent;
  attempt: number;
  status: CogStatus;
  /**
   * The receiver's HTTP status, "error" when it could not be reached (or the delivery was dropped,
   * `webhookDropNext`), null while in flight.
   */
  answer: number | "error" | null;
}

export interface CogStats {
  /** Predictions created: exactly the model runs started. */
  submits: number;
  /** PUTs answered with the state of a prediction in flight. */
  statusCalls: number;
  healthChecks: number;
  /** Cancels answered 200. */
  cancels: number;
  /** Creations refused because no slot was free (409). */
  conflicts: number;
  /** The most predictions in flight at once (starting or running). */
  maxRunning: number;
  /** Requests read and waiting while a held prediction blocks the server (0.12), as "PUT /path". */
  waiting: string[];
  /** Requests never served: their client left while a held prediction blocked the server (0.12). */
  unserved: number;
  jobs: CogJob[];
  webhooks: CogWebhookCall[];
  /** Every request answered, in the order answered, with the body it carried. */
  requests: ReceivedRequest<CogRequestKind | "health" | "other">[];
}

/** A request while it is handled: what will be recorded, and its body's text. */
export type CogRequest = ReceivedRequest<CogRequestKind | "health" | "other"> & { text: string };

export interface CogServer {
  url: string;
  /** Cog has no credential: always empty. */
  token: string;
  knobs: CogKnobs;
  stats: CogStats;
  /** Every prediction created with this id, oldest first (ids are reused once forgotten). */
  jobsFor(id: string): CogJob[];
  /** The model ends the predictions in flight now (or the one with this id), as at its last step. */
  finishNow(id?: string): void;
  close(): Promise<void>;
}

export interface CogInputField {
  type: "string" | "integer" | "number" | "boolean" | "array" | "object";
  enum?: unknown[];
}

export interface CogServerOptions {
  knobs?: Partial<CogKnobs>;
  /** When set, the container reports STARTING for this long, then READY. */
  setupMs?: number;
  /** The model's `Input` (the `predict()` arguments). */
  input?: { properties: Record<string, CogInputField>; required: string[] };
  /**
   * The model's `Input` as its published JSON Schema; when given it replaces `input`, and inputs
   * are checked against it as coglet checks them (unknown fields refused, see cog-server.ts).
   */
  inputSchema?: JsonSchema;
}

export const DEFAULT_KNOBS: CogKnobs = {
  flavor: "coglet",
  health: "READY",
  slots: 1,
  queueMs: 0,
  latencyMs: 100,
  progressSteps: 4,
  failNext: 0,
  failMessage: "CUDA out of memory. Tried to allocate 2.00 GiB",
  cancelLatencyMs: 0,
  loseAnswerNext: 0,
  loseAnswerAs: "drop",
  loseAnswerAt: "starting",
  rateLimitNext: {},
  retryAfterSeconds: 1,
  serverErrorNext: {},
  serverErrorStatus: 500,
  hangStatus: false,
  hangHealth: false,
  holdEnd: false,
  preferDropped: false,
  malformedOutput: false,
  outputSeconds: 2,
  outputAs: "data",
  webhookIntervalMs: 500,
  webhookRetryBaseMs: 100,
  webhookMaxRetries: 12,
  webhookDropNext: {},
};

export const DEFAULT_INPUT: NonNullable<CogServerOptions["input"]> = {
  properties: {
    prompt: { type: "string" },
    image: { type: "string" },
    video: { type: "string" },
    audio: { type: "string" },
    duration: { type: "number" },
    seed: { type: "integer" },
  },
  required: ["prompt"],
};

export const WEBHOOK_EVENTS: CogWebhookEvent[] = ["start", "output", "logs", "completed"];
export const NOT_A_VIDEO = Buffer.from("<!doctype html><title>Error</title><p>upload failed</p>\n");
export const COGLET_VERSION = "0.17.0";

export interface Prediction {
  key: string;
  job: CogJob;
  createdAt: string | null;
  startedAt: Date;
  completedAt: Date | null;
  output: string | null;
  willFail: boolean;
  webhook: { url: string; events: Set<string>; lastSentAt: number } | null;
  timers: NodeJS.Timeout[];
  /** Called once the model starts running. */
  onRunning: (() => void) | null;
  ended: Promise<void>;
  end: () => void;
}

/** Python's datetime ISO form, as Cog's JSON encoder writes it. */
export const pyTime = (d: Date | null) => (d ? d.toISOString().replace("Z", "000+00:00") : null);

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  if (res.headersSent || res.destroyed) return;
  const text = body === undefined ? "" : typeof body === "string" ? body : JSON.stringify(body);
  const type = typeof body === "string" ? "text/plain; charset=utf-8" : "application/json";
  const typed = body === undefined ? {} : { "content-type": type };
  res.writeHead(status, { ...typed, "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** One tqdm line, as a model's progress bar lands in Cog's `logs`. */
export function progressLine(step: number, steps: number): string {
  const pct = String(Math.round((100 * step) / steps)).padStart(3);
  const bar = "█".repeat(Math.round((10 * step) / steps)).padEnd(10);
  return `${pct}%|${bar}| ${step}/${steps} [00:0${step}<00:0${steps - step}, 1.00it/s]\n`;
}

export const detail = (loc: (string | number)[], msg: string, type: string) => ({ loc, msg, type });
