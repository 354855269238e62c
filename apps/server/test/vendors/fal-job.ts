/**
 * The fal queue protocol server's data: its knobs and counters, and one request (`Job`) moving from
 * IN_QUEUE through IN_PROGRESS to COMPLETED on the clock, with fal-style logs along the way.
 */
import type { FalErrorDetail } from "./input-refusals.js";
import type { JsonSchema } from "./input-schema.js";
import type { LoseAnswerAs } from "./lost-answer.js";
import type { ReceivedRequest } from "./received.js";

export type FalRequestKind = "submit" | "status" | "result" | "cancel";
export type FalStatus = "IN_QUEUE" | "IN_PROGRESS" | "COMPLETED";
/** How the model fails a job: the HTTP status and typed error it returns (see Model Errors). */
export interface FalFailure {
  status: number;
  type: string;
  message: string;
}
export type FalMalformedOutput = false | "bad-url" | "not-video" | "no-video";

export interface FalKnobs {
  /** Time a job spends IN_QUEUE (fixed per job at submit). */
  queueMs: number;
  /** Time a job spends IN_PROGRESS, logging progress along the way (fixed per job at submit). */
  latencyMs: number;
  /** The next N submitted jobs fail with `failure`. */
  failNext: number;
  failure: FalFailure;
  /** The next N requests of each kind answer 429 with `Retry-After: retryAfterSeconds`. */
  rateLimitNext: Partial<Record<FalRequestKind, number>>;
  retryAfterSeconds: number;
  /** The next N requests of each kind answer `serverErrorStatus`. */
  serverErrorNext: Partial<Record<FalRequestKind, number>>;
  serverErrorStatus: number;
  /** Status calls get no answer until this is cleared (or the client gives up). */
  hangStatus: boolean;
  /** The completed output's video is a non-URL, a non-video file, or missing. */
  malformedOutput: FalMalformedOutput;
  /** Output length in seconds; null follows the input's `duration` ("5", "5s" or 5), else 2. */
  outputSeconds: number | null;
  /** The model stops on a cancel signal; when false a running job completes regardless. */
  honourCancel: boolean;
  /**
   * The next N accepted submits lose their answer (lost-answer.ts): the job is queued, counted in
   * `submits`, runs and sends its webhook, but the client sees `loseAnswerAs`, a dropped connection
   * or a gateway's 502.
   */
  loseAnswerNext: number;
  loseAnswerAs: LoseAnswerAs;
  /** A request's webhook leaves this long after the request ends (read when it ends). */
  webhookDelayMs: number;
  /** The next N submits that carry `fal_webhook` never send their webhook (decided at submit). */
  dropWebhooksNext: number;
}

export interface FalJob {
  readonly requestId: string;
  readonly endpointId: string;
  readonly input: unknown;
  readonly webhookUrl: string | null;
  /** A cancel was accepted (202), and the state the job was in when it arrived. */
  cancelled: boolean;
  cancelledIn: FalStatus | null;
  /** The model's schema refused the input: the `detail` its result answers with 422. */
  readonly refusal: FalErrorDetail[] | null;
  readonly failed: boolean;
  readonly status: FalStatus;
  /** The submit's answer was lost (`loseAnswerNext`). */
  answerLost: boolean;
  /** Its webhook is never sent (`dropWebhooksNext`). */
  webhookDropped: boolean;
  /**
   * The job may have been billed: it reached a runner (went IN_PROGRESS), however it ended. One
   * cancelled IN_QUEUE never is: fal bills neither queue time nor server errors, and may bill a 422
   * that used GPU time (docs.fal.ai/faq "Do you charge for failed requests?",
   * fal.ai/docs/documentation/model-apis/pricing).
   */
  readonly paid: boolean;
}

export type FalRequest = ReceivedRequest<FalRequestKind | "file" | "other">;

/** One attempt to deliver a request's webhook (fal-webhooks.ts). */
export interface FalWebhookDelivery {
  requestId: string;
  /** 1, then 2 for the first retry, and so on. */
  attempt: number;
  /** The webhook body's `status`. */
  status: "OK" | "ERROR";
  /** The receiver's HTTP status, or null when it could not be reached. */
  responseStatus: number | null;
}

export interface FalStats {
  /** Accepted submits: exactly the jobs created. */
  submits: number;
  /** Every request to these routes, whatever it was answered. */
  statusCalls: number;
  resultCalls: number;
  cancels: number;
  jobs: Map<string, FalJob>;
  /**
   * Every request answered, in the order answered, with the body it carried; a submit whose answer
   * was dropped (`loseAnswerNext`) with status 0.
   */
  requests: FalRequest[];
  /** Every webhook delivery attempt, in the order made. */
  webhooks: FalWebhookDelivery[];
}

export interface FalServer {
  url: string;
  /** The key the server accepts (`Authorization: Key <token>`). */
  token: string;
  /** A real key without permission for these endpoints: 403. */
  forbiddenToken: string;
  knobs: FalKnobs;
  stats: FalStats;
  /** The JWKS webhooks are signed with (`GET /.well-known/jwks.json`, fal's is on rest.alpha.fal.ai). */
  jwksUrl: string;
  /** The account's user id, sent as `x-fal-webhook-user-id` and signed. */
  userId: string;
  /** Signs from now on with a new key; the JWKS publishes it first, then the keys signed with before. */
  rotateSigningKey(): void;
  close(): Promise<void>;
}

export interface FalServerOptions {
  /** Endpoint ids accepted by submit; any other answers 404. */
  endpoints?: string[];
  knobs?: Partial<FalKnobs>;
  /**
   * Published input schemas by endpoint id: a submitted input the schema refuses is queued as fal
   * queues any input, and its request then completes with the model's 422 (see fal-server.ts).
   */
  inputSchemas?: Record<string, JsonSchema>;
  /** Pauses before each retry of a webhook its receiver did not take (default 100, 500, 2000). */
  webhookRetryDelaysMs?: number[];
}

export const DEFAULT_KNOBS: FalKnobs = {
  queueMs: 50,
  latencyMs: 200,
  failNext: 0,
  failure: { status: 500, type: "internal_server_error", message: "The model failed to generate a video." },
  rateLimitNext: {},
  retryAfterSeconds: 1,
  serverErrorNext: {},
  serverErrorStatus: 503,
  hangStatus: false,
  malformedOutput: false,
  outputSeconds: null,
  honourCancel: true,
  loseAnswerNext: 0,
  loseAnswerAs: "drop",
  webhookDelayMs: 0,
  dropWebhooksNext: 0,
};

const PROGRESS_STEPS = 4;

export interface JobInit {
  requestId: string;
  endpointId: string;
  /** owner/app (with its namespace): where status, result and cancel live. */
  appPath: string;
  input: unknown;
  webhookUrl: string | null;
  submittedAt: number;
  queueMs: number;
  latencyMs: number;
  failure: FalFailure | null;
  refusal: FalErrorDetail[] | null;
  outputSeconds: number;
  malformed: FalMalformedOutput;
}

export class Job implements FalJob {
  cancelled = false;
  cancelledIn: FalStatus | null = null;
  answerLost = false;
  webhookDropped = false;
  /** When the job ended early (cancelled while queued, or running on a model that honours it). */
  stoppedAt: number | null = null;
  readonly requestId: string;
  readonly endpointId: string;
  readonly appPath: string;
  readonly input: unknown;
  readonly webhookUrl: string | null;
  readonly submittedAt: number;
  readonly startsAt: number;
  readonly endsAt: number;
  readonly latencyMs: number;
  readonly failure: FalFailure | null;
  readonly refusal: FalErrorDetail[] | null;
  readonly outputSeconds: number;
  readonly malformed: FalMalformedOutput;
  constructor(init: JobInit) {
    const { queueMs, ...fields } = init;
    this.requestId = fields.requestId;
    this.endpointId = fields.endpointId;
    this.appPath = fields.appPath;
    this.input = fields.input;
    this.webhookUrl = fields.webhookUrl;
    this.submittedAt = fields.submittedAt;
    this.latencyMs = fields.latencyMs;
    this.failure = fields.failure;
    this.refusal = fields.refusal;
    this.outputSeconds = fields.outputSeconds;
    this.malformed = fields.malformed;
    this.startsAt = init.submittedAt + queueMs;
    this.endsAt = this.startsAt + init.latencyMs;
  }
  get failed(): boolean {
    return (this.failure !== null || this.refusal !== null) && this.stoppedAt === null;
  }
  get status(): FalStatus {
    return this.statusAt(Date.now());
  }
  get paid(): boolean {
    return (this.stoppedAt ?? Date.now()) >= this.startsAt;
  }
  statusAt(now: number): FalStatus {
    if (this.stoppedAt !== null || now >= this.endsAt) return "COMPLETED";
    return now < this.startsAt ? "IN_QUEUE" : "IN_PROGRESS";
  }
  /** Runner logs up to `now`: a start line, then tqdm-style progress as fal forwards stderr. */
  logsAt(now: number): object[] {
    const until = Math.min(now, this.stoppedAt ?? Number.POSITIVE_INFINITY, this.endsAt);
    // A refused input never reaches the model's code.
    if (until < this.startsAt || this.refusal) return [];
    const line = (at: number, level: string, message: string) => ({
      message,
      level,
      source: "USER",
      timestamp: new Date(at).toISOString(),
    });
    const logs = [line(this.startsAt, "INFO", "Starting video generation")];
    for (let step = 0; step <= PROGRESS_STEPS; step++) {
      const at = this.startsAt + (this.latencyMs * step) / PROGRESS_STEPS;
      if (at > until) break;
      const pct = Math.round((100 * step) / PROGRESS_STEPS);
      const bar = "█".repeat(step * 2).padEnd(PROGRESS_STEPS * 2);
      logs.push(line(at, "STDERR", `${String(pct).padStart(3)}%|${bar}| ${step}/${PROGRESS_STEPS}`));
    }
    if (this.failure && until >= this.endsAt) logs.push(line(this.endsAt, "ERROR", this.failure.message));
    return logs;
  }
}
