import type { Logger } from "pino";
import { sleep } from "../clock.js";
import { cogBoxes, type LeftPrediction } from "./cog-box.js";
import { untilFree } from "./cog-health.js";
import { type HeldAnswer, HeldRequestLost, putAndHold } from "./cog-held-request.js";
import {
  type ProviderContext,
  ProviderError,
  type UpstreamJob,
  type VendorProviderOptions,
} from "./types.js";
import { cancelsUpstream, cancelsUpstreamAfter } from "./upstream/cancel-on-abort.js";
import { progressFromLogs } from "./upstream/input.js";
import {
  redactSecret,
  retryAfterMs,
  type VendorCall,
  VendorError,
  type VendorResponse,
  vendorFetch,
  vendorMessage,
  vendorUrl,
} from "./upstream/vendor-http.js";

/** What Cog answers about a prediction (coglet and Cog ≤ 0.16 share these fields). */
export interface CogPrediction {
  id?: unknown;
  status?: unknown;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
}

/** What a Cog route's prediction is made with. */
export interface HeldPredictionOptions
  extends Pick<VendorProviderOptions, "name" | "token" | "scheduler" | "clock" | "pollMs"> {
  /** Base URL of the container (`http://10.0.0.5:5000`) or of a proxy in front of it. */
  url: string;
  /** A prediction request unanswered this long was taken; 2000 ms by default. */
  acceptAfterMs?: number;
  /** Longest wait between tries while Cog is busy or failing; 10 000 ms by default. */
  maxBackoffMs?: number;
  /** A prediction still running this long after Cog accepted its cancel is uncancellable; 30 s. */
  cancelGraceMs?: number;
}

/** An input no model accepts: a probe with it can reattach to a prediction, never start one. */
const PROBE_INPUT: readonly unknown[] = [];
const PROBE_TIMEOUT_MS = 10_000;
const CANCEL_TIMEOUT_MS = 3_000;
const ENDED: readonly unknown[] = ["succeeded", "failed", "canceled"];
/** A gateway's answers when it gave up on Cog (Cog sends neither): Cog may hold the prediction. */
const GATEWAY_GAVE_UP: readonly number[] = [502, 504];

/** One run's prediction: created by a held sync PUT, watched by probes, cancelled when abandoned. */
export class HeldPrediction {
  /** Stops the held request, probes and waits; aborted only once Cog was told to cancel. */
  private readonly work = new AbortController();
  private stopping: Promise<void> | null = null;
  /** A request of this run may have left a prediction in flight. */
  private mayRun: boolean;
  private ended = false;
  /** The held request, while it is open. */
  private held: OpenRequest | null = null;
  /** Whether the prediction was left on the box: its held request is dropped only once Cog was heard. */
  private left = false;
  private recording: Promise<void> | null;
  /** A probe saw the current request's prediction past `starting`: its model ran. */
  private modelRan = false;
  private reported = 0;
  private readonly deadline: number;
  private readonly path: string;
  private readonly pollMs: number;
  private readonly acceptAfterMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly options: HeldPredictionOptions,
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
      if (this.mayRun && !this.ended && cancelsUpstreamAfter(err, this.context.signal)) await this.cancel();
      throw err;
    } finally {
      signal.removeEventListener("abort", onAbort);
      offDeadline();
    }
  }

  /**
   * Cancels the prediction (if one may run), then stops the work with `reason`. An abort that
   * leaves the job running only drops the held request: coglet then cancels exactly this request's
   * prediction, never one another worker started since under the same id. A prediction cancelled
   * while its request is open is left on the box (cog-box.ts) until it is seen to end.
   */
  private stop(reason: unknown): void {
    if (this.stopping) return;
    if (!(this.mayRun && !this.ended && cancelsUpstream(this.context.signal))) {
      this.stopping = Promise.resolve().then(() => this.work.abort(reason));
      return;
    }
    const held = this.held;
    const left = held && cogBoxes.leave(this.options.url, this.id, this.options);
    this.left = left !== null;
    this.stopping = this.cancel().then((accepted) => {
      this.work.abort(reason);
      if (held && left) this.follow(held, left, accepted);
    });
  }

  /** Follows a prediction left on the box to its end. */
  private follow(held: OpenRequest, left: LeftPrediction, accepted: boolean): void {
    if (accepted) {
      // Cog answers the held request once the prediction ended `canceled`.
      left.uncancellable(this.options.cancelGraceMs ?? 30_000);
      held.answer.then(left.ended, left.ended);
      return;
    }
    // coglet cancels a sync prediction whose request drops; Cog 0.12 runs on, and answers nothing,
    // its health-check neither, until the prediction ended.
    this.log?.warn("Cog did not cancel the prediction: no other starts on the box until it ended");
    left.uncancellable();
    held.drop();
    const { url, name, token, scheduler, clock } = this.options;
    const free = () => {
      left.ended();
      this.log?.info("the box is free of the prediction Cog did not cancel");
    };
    void untilFree(url, { name, token, scheduler, clock, pollMs: this.pollMs }).then(free, free);
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
    // Cog posts the prediction to the run's vendor webhook URL when it ends (its token is the check).
    const hookUrl = this.context.vendor?.hookUrl;
    const hook = hookUrl ? { webhook: hookUrl, webhook_events_filter: ["completed"] } : {};
    const payload = JSON.stringify({ input, ...hook });
    for (let failures = 0; ; ) {
      work.throwIfAborted();
      this.mayRun = true;
      this.modelRan = false;
      const answered = new AbortController();
      const watching = this.watch(answered.signal);
      const held = openRequest(url, payload, this.headers());
      this.held = held;
      let answer: HeldAnswer | null = null;
      let sent = true;
      try {
        answer = await untilAborted(held.answer, work);
      } catch (err) {
        if (work.aborted) throw work.reason;
        if (err instanceof ProviderError) throw err;
        // No whole answer: once the request went out, Cog may hold its prediction.
        sent = !(err instanceof HeldRequestLost) || err.sent;
      } finally {
        this.held = null;
        if (!this.left) held.drop();
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
      const lost = answer ? GATEWAY_GAVE_UP.includes(answer.status) : sent;
      if (!lost) this.mayRun = false;
      if (answer?.status === 422) {
        throw new ProviderError(
          redactSecret(`The model refused the input: ${refusalText(answer.body)}`, this.options.token),
        );
      }
      const failure = answer
        ? new VendorError(
            `${this.options.name} answered ${answer.status} to PUT ${url.pathname}: ${vendorMessage(body)}`,
            answer.status,
            answer.status === 409 || answer.status === 429 || answer.status >= 500,
          )
        : new VendorError(`${this.options.name}: connection lost (PUT ${url.pathname})`, null, true);
      if (lost) {
        await this.afterLostAnswer(failure);
        continue;
      }
      if (!failure.retryable) throw this.failed(failure);
      await this.backOff(failures++, headerOf(answer?.headers["retry-after"]), failure);
    }
  }

  /**
   * After a held request whose answer was lost (its connection dropped once it had gone out, or a
   * gateway's 502/504): the output of a prediction it left can reach no one (Cog hands it only to
   * that request, and forgets the prediction once ended), so probes follow the prediction, and it
   * is cancelled, until none of the run is in flight; the caller then creates it again. coglet
   * cancels it too, as the request dropped (crates/coglet/src/service.rs, SyncPredictionGuard),
   * before its model ran if it was still `starting`; a gateway closes its connection to Cog when it
   * gives up, so Cog sees that drop too. The run's vendor log says whether the lost prediction's
   * model ran (`uncertain`: paid twice) or was caught `starting` (not paid).
   */
  private async afterLostAnswer(failure: VendorError): Promise<void> {
    const vendor = this.context.vendor;
    const work = this.work.signal;
    this.log?.warn({ reason: failure.message }, "the answer to the prediction's request was lost");
    await vendor?.log("create_unanswered", this.id, failure.message);
    let ran = this.modelRan;
    let caughtStarting = false;
    let cancelled = false;
    for (let failures = 0; ; ) {
      const answer = await this.probeOnce(work).catch(() => null);
      work.throwIfAborted();
      // Refused: none in flight (Cog ≤ 0.16 validates first: the next PUT finds its one, 202).
      if (answer?.status === 422) break;
      if (answer?.status !== 202) {
        await this.backOff(failures++, answer?.headers.get("retry-after") ?? null, failure);
        continue;
      }
      this.record();
      if ((answer.body as CogPrediction | null)?.status === "starting") caughtStarting = true;
      else ran = true;
      if (!cancelled) cancelled = await this.cancel();
      await sleep(this.options.scheduler, this.pollMs, work);
    }
    if (ran || !caughtStarting) {
      const why = ran
        ? "two predictions of the run ran: the lost one's model ran, and its output reaches no one"
        : "the lost prediction ended unseen: its model may have run";
      this.log?.warn(why);
      await vendor?.log("uncertain", this.id, why);
    }
    const detail = ran || !caughtStarting ? null : "the lost prediction was cancelled before its model ran";
    await vendor?.log("created_again", this.id, detail);
  }

  /** Waits before the next try (full jitter, at least what Retry-After asks); `failure` at the deadline. */
  private async backOff(failures: number, retryAfter: string | null, failure: VendorError): Promise<void> {
    const step = Math.min(this.maxBackoffMs, this.pollMs * 2 ** failures);
    const asked = retryAfterMs(retryAfter, this.now()) ?? 0;
    const delay = Math.max(asked, Math.round(step * (0.5 + Math.random() / 2)));
    if (this.now() + delay >= this.deadline) throw this.failed(failure);
    this.log?.debug({ status: failure.status, delayMs: delay }, "Cog did not take the prediction yet");
    await sleep(this.options.scheduler, delay, this.work.signal);
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
      const answer = await this.probeOnce(answered);
      if (answer.status === 202) {
        this.record();
        const body = answer.body as CogPrediction | null;
        if (body?.status !== "starting") this.modelRan = true;
        this.progress(body?.logs);
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

  /** PUT of the run's id with an input no model takes: 202 with the prediction in flight, if any. */
  private probeOnce(signal: AbortSignal): Promise<VendorResponse> {
    return vendorFetch(
      { ...this.call(signal), attemptTimeoutMs: PROBE_TIMEOUT_MS },
      {
        method: "PUT",
        url: this.path,
        body: { input: PROBE_INPUT },
        accept: [409, 422, 429, 500, 502, 503, 504],
        once: true,
      },
    );
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

  /**
   * POST /predictions/{id}/cancel: one try with a short time limit; 404 when nothing runs, or
   * (Cog 0.12) once a held prediction ended. Accepted only when answered 200.
   */
  async cancel(): Promise<boolean> {
    try {
      const answer = await vendorFetch(
        { ...this.call(AbortSignal.timeout(CANCEL_TIMEOUT_MS)), attemptTimeoutMs: CANCEL_TIMEOUT_MS },
        { method: "POST", url: `${this.path}/cancel`, accept: [404], once: true },
      );
      this.log?.info({ status: answer.status }, "cancelled the Cog prediction");
      return answer.status !== 404;
    } catch (err) {
      const reason = redactSecret(err instanceof Error ? err.message : "unknown error", this.options.token);
      this.log?.warn({ reason }, "could not cancel the Cog prediction");
      return false;
    }
  }

  /** The error of a prediction Cog never took says so: the worker may try another route. */
  private failed(err: VendorError): VendorError {
    const message = redactSecret(err.message, this.options.token);
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
 * Cog's refusal of an input in its words: pydantic's `detail` (coglet's too,
 * crates/coglet/src/input_validation.rs), every entry as `field: msg` with the `body.input` prefix
 * dropped; any other body as the vendor said it.
 */
function refusalText(body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (!Array.isArray(detail)) return vendorMessage(body);
  const lines = detail.map((entry) => {
    const { loc, msg } = (entry ?? {}) as { loc?: unknown; msg?: unknown };
    const path = Array.isArray(loc) ? loc.map(String) : [];
    const skip = path[0] === "body" ? (path[1] === "input" ? 2 : 1) : 0;
    const field = path.slice(skip).join(".");
    return field ? `${field}: ${String(msg)}` : String(msg);
  });
  return lines.length > 0 ? lines.join("; ").slice(0, 500) : vendorMessage(body);
}

/** A held request and the way to drop it. */
interface OpenRequest {
  answer: Promise<HeldAnswer>;
  drop(): void;
}

function openRequest(url: URL, payload: string, headers: Record<string, string>): OpenRequest {
  const controller = new AbortController();
  const answer = putAndHold(url, payload, headers, controller.signal);
  answer.catch(() => {});
  return { answer, drop: () => controller.abort() };
}

/** `promise`'s outcome, or `signal`'s reason as soon as it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

function headerOf(value: string | string[] | undefined): string | null {
  return (Array.isArray(value) ? value[0] : value) ?? null;
}
