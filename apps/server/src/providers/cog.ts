/**
 * A model on an operator's own GPU box, served by Cog's HTTP API (`cog` images, port 5000; see
 * docs/http.md in replicate/cog).
 *
 * Cog has no GET of a prediction and forgets one as soon as it ends: the output reaches only the
 * request that created it (a sync PUT, answered when the prediction ends) or a webhook, and a PUT
 * of an ended id starts a new model run. An async PUT followed by re-PUTs would therefore never see
 * the output, and a re-PUT landing just after the end would pay for a second run; webhooks would
 * need an address on the worker that the box can reach and that outlives the worker. So the
 * prediction is created with a sync `PUT /predictions/{runId}` held open until it ends: that one
 * request is the result channel, and nothing ever PUTs a valid input for an ended prediction.
 *
 * - While it is held, a probe every `pollMs` PUTs the same id with an input no model takes (`[]`).
 *   A prediction in flight answers 202 with its state (coglet looks the id up before it reads the
 *   input): proof that Cog took it, and progress from its logs. Otherwise the probe is refused
 *   (422) and nothing runs, so a probe never starts a model run. Cog ≤ 0.16 validates first, so
 *   there probes are dropped once refused, and the job counts as taken once the held request went
 *   `acceptAfterMs` unanswered (Cog refuses a prediction — 409, 503, 422 — at once).
 * - The held request goes over node:http, not fetch: fetch gives up waiting for headers after
 *   300 s, and coglet cancels a sync prediction whose request is dropped.
 * - 409 (every slot busy), 503 (not ready), a proxy's 429 and 5xx and lost connections are retried
 *   with backoff until the run's deadline. A 202 to the held request is an earlier request's
 *   prediction still in flight (a worker that died, a dropped connection): its output reaches
 *   nobody, so it is cancelled and the prediction started again once it is gone. A worker that
 *   resumes a run thus never runs a second prediction beside the first, but it cannot adopt the
 *   first: Cog offers no way to read its output.
 * - An abort cancels the prediction, then drops the held request. One that leaves the job running
 *   (`LeaveUpstreamRunning`) only drops the request; the next worker cancels what is still in flight.
 */
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import type { Logger } from "pino";
import { type Clock, type Scheduler, sleep, systemClock, systemScheduler } from "../clock.js";
import {
  cancelsUpstream,
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
  type UpstreamJob,
} from "./types.js";
import { type InputMapping, progressFromLogs, vendorInput } from "./upstream/input.js";
import { fetchOutputVideo } from "./upstream/output.js";
import {
  retryAfterMs,
  type VendorCall,
  VendorError,
  vendorFetch,
  vendorMessage,
  vendorUrl,
} from "./upstream/vendor-http.js";

export interface CogProviderOptions {
  /** The provider's name in the routing file; kept with the prediction on the run. */
  name: string;
  /** Base URL of the container (`http://10.0.0.5:5000`) or of a proxy in front of it. */
  url: string;
  /** A fronting proxy's credential, sent as `Authorization: Bearer <token>`; Cog itself takes none. */
  token: string | null;
  /** Unused: a Cog container serves one model. */
  model?: string;
  /** The route's renames and fixed fields. */
  mapping?: InputMapping;
  /** REFVID_ALLOW_LOCAL_URLS: accept an output video on a loopback or private host. */
  allowLocalOutputs: boolean;
  scheduler: Scheduler;
  clock: Clock;
  /** Wait between probes, and the first backoff step while Cog is busy; 1000 ms by default. */
  pollMs?: number;
  /** A prediction request unanswered this long was taken; 2000 ms by default. */
  acceptAfterMs?: number;
  /** Longest wait between tries while Cog is busy or failing; 10 000 ms by default. */
  maxBackoffMs?: number;
  logger?: Logger;
}

/** What Cog answers about a prediction (coglet and Cog ≤ 0.16 share these fields). */
interface CogPrediction {
  id?: unknown;
  status?: unknown;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
}

interface HeldAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** An input no model accepts: a probe with it can reattach to a prediction, never start one. */
const PROBE_INPUT: readonly unknown[] = [];
const PROBE_TIMEOUT_MS = 10_000;
const CANCEL_TIMEOUT_MS = 3_000;
const KEEPALIVE_MS = 30_000;
/** A JavaScript string holds at most ~512 MiB; larger outputs belong on Cog's upload URL. */
const MAX_ANSWER_BYTES = 500 * 1024 * 1024;
const ENDED: readonly unknown[] = ["succeeded", "failed", "canceled"];

export class CogProvider implements Provider {
  /** Cog fetches the reference URLs itself. */
  readonly usesReferences = false;

  constructor(private readonly options: CogProviderOptions) {
    if (!URL.canParse(options.url)) {
      throw new Error(`Cog provider "${options.name}" needs the container's URL, e.g. http://10.0.0.5:5000`);
    }
  }

  async run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult> {
    const { signal } = context;
    signal.throwIfAborted();
    const { name } = this.options;
    if (context.upstream && context.upstream.provider !== name) {
      throw new VendorError(
        `the run's vendor job belongs to ${context.upstream.provider}, not ${name}`,
        null,
        false,
      );
    }
    const id = context.upstream?.id ?? job.runId;
    const log = this.options.logger?.child({ runId: job.runId, provider: name, upstreamId: id });
    if (context.upstream) log?.info("resuming the run's Cog prediction");
    const held = new HeldPrediction(this.options, id, context, log);
    const answer = await held.result(vendorInput(job.input, this.options.mapping));
    if (answer.status === "failed") {
      const message = typeof answer.error === "string" && answer.error ? answer.error : "The model failed.";
      throw new ProviderError(redact(message.slice(0, 300), this.options.token));
    }
    if (answer.status === "canceled")
      throw new ProviderError("The prediction was cancelled on the Cog server.");
    const result = await fetchOutputVideo(firstOutput(answer.output), {
      workDir: job.workDir,
      signal,
      allowLocal: this.options.allowLocalOutputs,
    });
    context.onProgress(1);
    return result;
  }
}

/** One run's prediction: created by a held sync PUT, watched by probes, cancelled when abandoned. */
class HeldPrediction {
  /** Stops the held request, probes and waits; aborted only once Cog was told to cancel. */
  private readonly work = new AbortController();
  private stopping: Promise<void> | null = null;
  /** A request of this run may have left a prediction in flight. */
  private mayRun: boolean;
  private ended = false;
  private recording: Promise<void> | null;
  private reported = 0;
  private readonly deadline: number;
  private readonly path: string;
  private readonly pollMs: number;
  private readonly acceptAfterMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly options: CogProviderOptions,
    private readonly id: string,
    private readonly context: ProviderContext,
    private readonly log: Logger | undefined,
  ) {
    this.deadline = context.deadline ?? Number.POSITIVE_INFINITY;
    this.path = `predictions/${encodeURIComponent(id)}`;
    this.pollMs = options.pollMs ?? 1000;
    this.acceptAfterMs = options.acceptAfterMs ?? 2000;
    this.maxBackoffMs = options.maxBackoffMs ?? 10_000;
    // A resumed prediction is on the run already, and may still be in flight.
    this.recording = context.upstream ? Promise.resolve() : null;
    this.mayRun = Boolean(context.upstream);
  }

  /** The ended prediction (succeeded, failed or canceled), its job recorded on the run. */
  async result(input: Record<string, unknown>): Promise<CogPrediction> {
    const { signal } = this.context;
    const onAbort = () => this.stop(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const left = this.deadline - this.now();
    const offDeadline = Number.isFinite(left)
      ? this.options.scheduler.setTimeout(() => {
          const what = this.recording ? "had not ended" : "was not taken";
          const message = `${this.options.name}: prediction ${this.id} ${what} by the run's deadline`;
          this.stop(this.failed(new VendorError(message, null, true)));
        }, left)
      : () => {};
    try {
      const answer = await this.create(input);
      this.ended = true;
      if (this.stopping) throw await this.stopped();
      this.record();
      await this.recording;
      return answer;
    } catch (err) {
      if (this.stopping) throw await this.stopped();
      if (this.mayRun && !this.ended && !(err instanceof ProviderError)) await this.cancel();
      throw err;
    } finally {
      signal.removeEventListener("abort", onAbort);
      offDeadline();
    }
  }

  /**
   * Cancels the prediction (if one may run), then stops the work with `reason`. An abort that
   * leaves the job running only drops the held request: coglet then cancels exactly this request's
   * prediction, never one another worker started since under the same id.
   */
  private stop(reason: unknown): void {
    if (this.stopping) return;
    const cancel = this.mayRun && !this.ended && cancelsUpstream(this.context.signal);
    const cancelling = cancel ? this.cancel() : Promise.resolve();
    this.stopping = cancelling.then(() => this.work.abort(reason));
  }

  /** Why the work stopped, once Cog was told to cancel: the run's abort reason first. */
  private async stopped(): Promise<unknown> {
    await this.stopping;
    return this.context.signal.aborted ? this.context.signal.reason : this.work.signal.reason;
  }

  /** The held sync PUT, repeated while Cog is busy, not ready or unreachable, until the deadline. */
  private async create(input: Record<string, unknown>): Promise<CogPrediction> {
    const work = this.work.signal;
    const url = vendorUrl(this.options.url, this.path);
    const payload = JSON.stringify({ input });
    for (let failures = 0; ; ) {
      work.throwIfAborted();
      this.mayRun = true;
      const answered = new AbortController();
      const watching = this.watch(answered.signal);
      let answer: HeldAnswer | null = null;
      try {
        answer = await putAndHold(url, payload, this.headers(), work);
      } catch (err) {
        if (work.aborted) throw work.reason;
        if (err instanceof ProviderError) throw err;
        // The connection was lost: a prediction may run on (coglet cancels it).
      } finally {
        answered.abort();
        await watching;
      }
      const body = (answer?.body ?? null) as CogPrediction | null;
      if (answer?.status === 200 && ENDED.includes(body?.status)) return body as CogPrediction;
      if (answer?.status === 202) {
        this.log?.warn(
          "an earlier prediction of this run is in flight and nobody gets its output: cancelling it",
        );
        await this.cancel();
        await sleep(this.options.scheduler, this.pollMs, work);
        continue;
      }
      if (answer) this.mayRun = false;
      if (answer?.status === 422) {
        throw new ProviderError(
          redact(`The model refused the input: ${vendorMessage(body)}`, this.options.token),
        );
      }
      const failure = answer
        ? new VendorError(
            `${this.options.name} answered ${answer.status} to PUT ${url.pathname}: ${vendorMessage(body)}`,
            answer.status,
            answer.status === 409 || answer.status === 429 || answer.status >= 500,
          )
        : new VendorError(`${this.options.name}: connection lost (PUT ${url.pathname})`, null, true);
      if (!failure.retryable) throw this.failed(failure);
      const step = Math.min(this.maxBackoffMs, this.pollMs * 2 ** failures++);
      const asked = retryAfterMs(headerOf(answer?.headers["retry-after"]), this.now()) ?? 0;
      const delay = Math.max(asked, Math.round(step * (0.5 + Math.random() / 2)));
      if (this.now() + delay >= this.deadline) throw this.failed(failure);
      this.log?.debug({ status: failure.status, delayMs: delay }, "Cog did not take the prediction yet");
      await sleep(this.options.scheduler, delay, work);
    }
  }

  /** While the held request is unanswered: records the job once taken, and reports progress. */
  private async watch(answered: AbortSignal): Promise<void> {
    const { scheduler } = this.options;
    const started = this.now();
    const offAccept = this.recording
      ? () => {}
      : scheduler.setTimeout(() => this.record(), this.acceptAfterMs);
    try {
      for (let wait: number | null = this.pollMs; wait !== null; ) {
        await sleep(scheduler, wait, answered);
        if (answered.aborted) return;
        wait = await this.probe(answered, this.now() - started >= this.acceptAfterMs);
      }
    } finally {
      offAccept();
    }
  }

  /** One probe; answers the wait before the next, or null when probes cannot see the prediction. */
  private async probe(answered: AbortSignal, longHeld: boolean): Promise<number | null> {
    try {
      const answer = await vendorFetch(
        { ...this.call(answered), attemptTimeoutMs: PROBE_TIMEOUT_MS },
        {
          method: "PUT",
          url: this.path,
          body: { input: PROBE_INPUT },
          accept: [409, 422, 429, 500, 502, 503, 504],
          once: true,
        },
      );
      if (answer.status === 202) {
        this.record();
        this.progress((answer.body as CogPrediction | null)?.logs);
        return this.pollMs;
      }
      // Refused while our own request has long been held: this Cog validates before it reattaches.
      if (answer.status === 422 && longHeld) return null;
      const asked = retryAfterMs(answer.headers.get("retry-after"), this.now());
      return answer.status === 429 || answer.status >= 500
        ? Math.max(asked ?? 0, this.pollMs * 2)
        : this.pollMs;
    } catch {
      // Unanswered in time (or the held request ended): the held request still carries the result.
      return this.pollMs * 2;
    }
  }

  private progress(logs: unknown): void {
    const fraction = progressFromLogs(logs);
    if (fraction === undefined) return;
    const capped = Math.min(fraction, 0.99);
    if (capped <= this.reported) return;
    this.reported = capped;
    this.context.onProgress(capped);
  }

  /** Keeps the prediction on the run, once; a refusal (the lease is gone) stops it. */
  private record(): void {
    if (this.recording) return;
    const job: UpstreamJob = { provider: this.options.name, id: this.id, urls: {} };
    this.log?.info("Cog took the prediction");
    this.recording = Promise.resolve()
      .then(() => this.context.recordUpstream?.(job))
      .catch((err: unknown) => {
        this.stop(err);
        throw err;
      });
    this.recording.catch(() => {});
  }

  /** POST /predictions/{id}/cancel: one try with a short time limit; 404 when nothing runs. */
  private async cancel(): Promise<void> {
    try {
      const answer = await vendorFetch(
        { ...this.call(AbortSignal.timeout(CANCEL_TIMEOUT_MS)), attemptTimeoutMs: CANCEL_TIMEOUT_MS },
        { method: "POST", url: `${this.path}/cancel`, accept: [404], once: true },
      );
      this.log?.info({ status: answer.status }, "cancelled the Cog prediction");
    } catch (err) {
      const reason = redact(err instanceof Error ? err.message : "unknown error", this.options.token);
      this.log?.warn({ reason }, "could not cancel the Cog prediction");
    }
  }

  /** The error of a prediction Cog never took says so: the worker may try another route. */
  private failed(err: VendorError): VendorError {
    const message = redact(err.message, this.options.token);
    return new VendorError(this.recording ? message : `submit failed: ${message}`, err.status, err.retryable);
  }

  private headers(): Record<string, string> {
    const { token } = this.options;
    return {
      accept: "application/json",
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    };
  }

  private call(signal: AbortSignal): VendorCall {
    const { name, url, token, scheduler } = this.options;
    return {
      provider: name,
      baseUrl: url,
      authorization: token ? `Bearer ${token}` : null,
      scheduler,
      now: () => this.now(),
      signal,
      deadline: this.deadline,
    };
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }
}

/**
 * PUT with no time limit on the answer (a sync prediction answers when it ends); only `signal`
 * ends it. TCP keep-alive notices a box that went away.
 */
function putAndHold(
  url: URL,
  payload: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<HeldAnswer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === "https:" ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: "PUT",
        headers: { ...headers, "content-length": String(Buffer.byteLength(payload)) },
        signal,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk);
          else {
            reject(
              new ProviderError("The model's output is too large to take inline: give Cog an upload URL."),
            );
            req.destroy();
          }
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = text ? JSON.parse(text) : null;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
        res.on("error", reject);
        res.on("close", () => {
          if (!res.complete) reject(new Error("the answer was cut short"));
        });
      },
    );
    req.on("socket", (socket) => socket.setKeepAlive(true, KEEPALIVE_MS));
    req.on("error", reject);
    req.end(payload);
  });
}

/** The output URL (or data: URL), or the first string of a list of outputs. */
function firstOutput(output: unknown): unknown {
  return Array.isArray(output) ? output.find((value) => typeof value === "string" && value !== "") : output;
}

function headerOf(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function redact(message: string, token: string | null): string {
  return token ? message.split(token).join("[redacted]") : message;
}

/** A container's readiness, from GET /health-check. */
export interface CogHealthReport {
  /** READY or BUSY: the container takes (or queues behind) predictions. */
  ok: boolean;
  /** Cog's status (STARTING, READY, BUSY, SETUP_FAILED, DEFUNCT, UNHEALTHY), or UNREACHABLE. */
  status: string;
  /** Why it is not ok: the setup's last log line, the user healthcheck's error, the call's error. */
  detail?: string;
  /** The Cog version, when the container reports one. */
  version?: string;
}

export interface CogHealthOptions {
  /** For messages; `cog` by default. */
  name?: string;
  token?: string | null;
  timeoutMs?: number;
  signal?: AbortSignal;
  scheduler?: Scheduler;
  clock?: Clock;
}

/** Asks a Cog container whether it is ready, once, within `timeoutMs` (5000 by default). */
export async function cogHealth(url: string, options: CogHealthOptions = {}): Promise<CogHealthReport> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const clock = options.clock ?? systemClock;
  const signal = options.signal ?? new AbortController().signal;
  let body: {
    status?: unknown;
    setup?: { status?: unknown; logs?: unknown };
    user_healthcheck_error?: unknown;
    version?: { cog?: unknown; coglet?: unknown };
  };
  try {
    const answer = await vendorFetch(
      {
        provider: options.name ?? "cog",
        baseUrl: url,
        authorization: options.token ? `Bearer ${options.token}` : null,
        scheduler: options.scheduler ?? systemScheduler,
        now: () => clock.now().getTime(),
        signal,
        deadline: clock.now().getTime(),
        attemptTimeoutMs: timeoutMs,
      },
      { method: "GET", url: "health-check", once: true },
    );
    body = (answer.body ?? {}) as typeof body;
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    const detail = err instanceof Error ? redact(err.message, options.token ?? null) : "unknown error";
    return { ok: false, status: "UNREACHABLE", detail };
  }
  const status = typeof body.status === "string" ? body.status : "UNKNOWN";
  const ok = status === "READY" || status === "BUSY";
  const version = body.version?.cog ?? body.version?.coglet;
  const setupLogs = typeof body.setup?.logs === "string" ? body.setup.logs.trim().split("\n") : [];
  const detail = ok
    ? undefined
    : typeof body.user_healthcheck_error === "string"
      ? body.user_healthcheck_error
      : body.setup?.status === "failed"
        ? setupLogs.at(-1)
        : undefined;
  return {
    ok,
    status,
    ...(detail ? { detail } : {}),
    ...(typeof version === "string" ? { version } : {}),
  };
}
