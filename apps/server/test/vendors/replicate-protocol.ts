/** The Replicate protocol server's data (knobs, counters, predictions) and the protocol's small pieces: ids, tqdm lines, `Prefer` and `Cancel-After` parsing, problem+json answers. */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { JsonSchema } from "./input-schema.js";
import type { LoseAnswerAs } from "./lost-answer.js";
import type { ReceivedRequest } from "./received.js";

export type PredictionStatus = "starting" | "processing" | "succeeded" | "failed" | "canceled" | "aborted";
export type WebhookEvent = "start" | "output" | "logs" | "completed";
/** What a request does, for counting and for aiming the 429 and 5xx knobs. */
export type RequestKind = "submit" | "status" | "cancel" | "list" | "download" | "other";
/** Unusable outputs a succeeded prediction can carry. */
export type MalformedOutput = "not-a-url" | "not-a-video" | "null" | "empty-list";

export interface ReplicateKnobs {
  /** How long a prediction is `processing`; progress lines are written to `logs` along the way. */
  latencyMs: number;
  /** How long a prediction is `starting` (waiting for a worker) before it runs. */
  queueMs: number;
  /** tqdm progress lines written over one run. */
  progressSteps: number;
  /** The next N predictions end `failed` with `failMessage` as their `error`. */
  failNext: number;
  failMessage: string;
  /** The next N predictions end `aborted` before they start, as when a deadline passes in the queue. */
  abortNext: number;
  /** The next N requests of `rateLimitKind` answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext: number;
  /** `any` is every API request (not file downloads). */
  rateLimitKind: RequestKind | "any";
  retryAfterSeconds: number;
  /** The next N requests of `serverErrorKind` answer `serverErrorStatus`. */
  serverErrorNext: number;
  serverErrorKind: RequestKind | "any";
  serverErrorStatus: 500 | 502 | 503;
  /** While true, `GET /v1/predictions/{id}` answers only once cleared, or never if the client gives up. */
  hangStatus: boolean;
  /** Succeeded predictions carry this kind of unusable output instead of an MP4 URL. */
  malformedOutput: false | MalformedOutput;
  /** Length of the output video in seconds; null follows `input.duration` (5 when absent). */
  outputSeconds: number | null;
  /** The output as one URL string or as a list of URLs (video models do both). */
  outputShape: "string" | "list";
  /** Input, output, logs and files are removed this long after a prediction ends (Replicate: 1 h). */
  dataRetentionMs: number;
  /**
   * The next N accepted creates lose their answer (lost-answer.ts): the prediction exists, is
   * counted in `submits`, runs and sends its webhooks, but the client sees `loseAnswerAs`, a
   * dropped connection or a gateway's 502.
   */
  loseAnswerNext: number;
  loseAnswerAs: LoseAnswerAs;
  /** Each webhook leaves this long after its event (read at the event). */
  webhookDelayMs: number;
  /** The next N creates that carry a `webhook` never send one (decided at create). */
  dropWebhooksNext: number;
}

export interface ReplicateServerOptions {
  token?: string;
  /** The official model served, as `owner/name`. */
  model?: string;
  /** A 64-hex version id, also accepted as `version` on `POST /v1/predictions`. */
  versionId?: string;
  /** Milliseconds in one protocol second for `Prefer: wait=N` and `Cancel-After` (tests shrink it). */
  secondMs?: number;
  /** Pauses between retries of a prediction's final webhook. */
  webhookRetryDelaysMs?: number[];
  /** Predictions a page of `GET /v1/predictions` lists (Replicate: 100). */
  listPageSize?: number;
  knobs?: Partial<ReplicateKnobs>;
  /**
   * Published input schemas by `owner/name` or version id; the served model's, when given, replaces
   * the built-in check (a prompt, a duration of 1–60 s) and a create whose input it refuses is
   * answered 422 with Replicate's `invalid_fields`.
   */
  inputSchemas?: Record<string, JsonSchema>;
}

export interface PredictionStat {
  id: string;
  route: "model" | "version";
  input: Record<string, unknown>;
  status: PredictionStatus;
  /** A cancel request ended it (a Cancel-After deadline does not count). */
  canceled: boolean;
  cancelRequests: number;
  preferWaitSeconds: number | null;
  webhook: string | null;
  /** The create's answer was lost (`loseAnswerNext`). */
  answerLost: boolean;
  /** Its webhooks are never sent (`dropWebhooksNext`). */
  webhookDropped: boolean;
  /**
   * The prediction may have been billed: it went `processing`, however it ended. One canceled or
   * aborted while `starting` never is: on a public model Replicate bills only the time it is
   * active processing a request, not setup or queue time (replicate.com/docs/topics/billing).
   */
  paid: boolean;
}

export interface WebhookDelivery {
  predictionId: string;
  event: WebhookEvent;
  webhookId: string;
  attempt: number;
  status: PredictionStatus;
  /** The receiver's HTTP status, or null when it could not be reached. */
  responseStatus: number | null;
}

export interface ReplicateStats {
  /** Accepted creations (201/202): one per upstream prediction. */
  submits: number;
  /** Create requests received, whatever their answer. */
  submitAttempts: number;
  /** `GET /v1/predictions/{id}` requests received, whatever their answer. */
  statusCalls: number;
  /** Cancel requests received, whatever their answer. */
  cancels: number;
  /** Output file requests received. */
  downloads: number;
  predictions: Map<string, PredictionStat>;
  /** Every webhook delivery attempt, in the order made. */
  webhooks: WebhookDelivery[];
  /**
   * Every request answered, in the order answered, with the body it carried; a create whose answer
   * was dropped (`loseAnswerNext`) with status 0.
   */
  requests: ReceivedRequest<RequestKind>[];
}

export interface ReplicateServer {
  /** Base URL: the adapter's `https://api.replicate.com` (paths start with `/v1`). */
  url: string;
  token: string;
  model: string;
  versionId: string;
  /** The `whsec_` signing secret, also served at `GET /v1/webhooks/default/secret`. */
  webhookSecret: string;
  knobs: ReplicateKnobs;
  stats: ReplicateStats;
  /** The prediction as `GET` would show it now, without counting a request. */
  prediction(id: string): Record<string, unknown> | undefined;
  close(): Promise<void>;
}

export interface Prediction {
  stat: PredictionStat;
  version: string;
  webhook: string | null;
  events: ReadonlySet<WebhookEvent>;
  status: PredictionStatus;
  logs: string;
  output: unknown;
  error: string | null;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  deadline: number | null;
  fileKey: string;
  seconds: number;
  malformed: false | MalformedOutput;
  ending: "succeed" | "fail" | "abort";
  failMessage: string;
  latencyMs: number;
  steps: number;
  timers: Set<NodeJS.Timeout>;
  onSettled: Set<() => void>;
  lastThrottledWebhookAt: number;
  webhookChain: Promise<void>;
}

export const TERMINAL: ReadonlySet<PredictionStatus> = new Set([
  "succeeded",
  "failed",
  "canceled",
  "aborted",
]);
export const EVENTS: readonly WebhookEvent[] = ["start", "output", "logs", "completed"];
/**
 * The events sent when a create gives no filter: "By default, we will send requests to your webhook
 * URL whenever there are new outputs or the prediction has finished" (predictions.create).
 */
export const DEFAULT_EVENTS: readonly WebhookEvent[] = ["output", "completed"];
export const MAX_BODY_BYTES = 10 * 1024 * 1024;

export const defaultKnobs: ReplicateKnobs = {
  latencyMs: 200,
  queueMs: 50,
  progressSteps: 4,
  failNext: 0,
  failMessage: "CUDA out of memory. Tried to allocate 2.00 GiB",
  abortNext: 0,
  rateLimitNext: 0,
  rateLimitKind: "any",
  retryAfterSeconds: 1,
  serverErrorNext: 0,
  serverErrorKind: "any",
  serverErrorStatus: 500,
  hangStatus: false,
  malformedOutput: false,
  outputSeconds: null,
  outputShape: "string",
  dataRetentionMs: 3_600_000,
  loseAnswerNext: 0,
  loseAnswerAs: "drop",
  webhookDelayMs: 0,
  dropWebhooksNext: 0,
};

/** Prediction ids look like Replicate's: 26 lowercase base32 characters. */
export function predictionId(): string {
  const alphabet = "0123456789abcdefghjkmnpqrstvwxyz";
  return Array.from(randomBytes(26), (b) => alphabet[b % 32]).join("");
}

export const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function clock(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return `${String(Math.floor(s / 60)).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
}

/** A tqdm line, as Replicate's clients parse progress: ` 50%|█████     | 2/4 [00:01<00:01,  2.00it/s]`. */
export function tqdm(step: number, steps: number, latencyMs: number): string {
  const pct = Math.round((100 * step) / steps);
  const filled = Math.round((10 * step) / steps);
  const rate = (steps / Math.max(latencyMs / 1000, 0.001)).toFixed(2);
  const elapsed = (latencyMs * step) / steps;
  return `${String(pct).padStart(3)}%|${"█".repeat(filled)}${" ".repeat(10 - filled)}| ${step}/${steps} [${clock(elapsed)}<${clock(latencyMs - elapsed)}, ${rate.padStart(6)}it/s]`;
}

/** `Prefer: wait` or `wait=N` (1–60; larger values are held to 60); null when absent or unparseable. */
export function preferWait(header: string | undefined): number | null {
  for (const part of (header ?? "").split(",")) {
    const match = /^wait(?:=(\d+))?$/.exec(part.trim());
    if (!match) continue;
    if (match[1] === undefined) return 60;
    const seconds = Number(match[1]);
    return seconds >= 1 ? Math.min(seconds, 60) : null;
  }
  return null;
}

/** `Cancel-After` as seconds: `30`, `30s`, `5m`, `1h30m45s`. */
export function cancelAfterSeconds(header: string): number | null {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s?)?$/.exec(header.trim());
  if (!match || header.trim() === "") return null;
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": status >= 400 ? "application/problem+json" : "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Replicate's RFC 7807 problem body. */
export function problem(
  res: ServerResponse,
  status: number,
  title: string,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  send(res, status, { title, detail, status, ...extra }, headers);
}

export interface InvalidField {
  type: string;
  field: string;
  description: string;
}

export function invalid(res: ServerResponse, fields: InvalidField[]) {
  problem(
    res,
    422,
    "Input validation failed",
    fields.map((f) => `- ${f.field}: ${f.description}`).join("\n"),
    { invalid_fields: fields },
  );
}

export async function readBody(req: IncomingMessage): Promise<string | "too-large"> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return "too-large";
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
