import type { Logger } from "pino";
import { sleep } from "../clock.js";
import { cogBoxes, type LeftPrediction } from "./cog-box.js";
import { untilFree } from "./cog-health.js";
import {
  answerLost,
  type CogPrediction,
  endedPrediction,
  heldFailure,
  type OpenRequest,
  openRequest,
  refusal,
  retryAfterOf,
  untilAborted,
} from "./cog-held-put.js";
import { type HeldAnswer, HeldRequestLost } from "./cog-held-request.js";
import { probePrediction, watchHeld } from "./cog-probe.js";
import { type LostAnswer, recoverLostAnswer } from "./cog-recovery.js";
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
  vendorUrl,
} from "./upstream/vendor-http.js";

export type { CogPrediction } from "./cog-held-put.js";

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

const CANCEL_TIMEOUT_MS = 3_000;

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
      const ended = endedPrediction(answer);
      if (ended) return ended;
      if (answer?.status === 202) {
        this.log?.warn(
          "an earlier prediction of this run is in flight and nobody gets its output: cancelling it",
        );
        await this.cancel();
        await sleep(this.options.scheduler, this.pollMs, work);
        continue;
      }
      const lost = answerLost(answer, sent);
      if (!lost) this.mayRun = false;
      if (answer?.status === 422) throw refusal(answer.body, this.options.token);
      const failure = heldFailure(this.options.name, url, answer);
      if (lost) {
        await this.afterLostAnswer(failure);
        continue;
      }
      if (!failure.retryable) throw this.failed(failure);
      await this.backOff(failures++, retryAfterOf(answer), failure);
    }
  }

  /** Probes and cancels until none of the run is in flight (cog-recovery.ts). */
  private afterLostAnswer(failure: VendorError): Promise<void> {
    const lost: LostAnswer = {
      id: this.id,
      vendor: this.context.vendor,
      log: this.log,
      signal: this.work.signal,
      modelRan: this.modelRan,
      probe: (signal) => this.probeOnce(signal),
      record: () => this.record(),
      cancel: () => this.cancel(),
      backOff: (failures, retryAfter, why) => this.backOff(failures, retryAfter, why),
      pause: () => sleep(this.options.scheduler, this.pollMs, this.work.signal),
    };
    return recoverLostAnswer(lost, failure);
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
  private watch(answered: AbortSignal): Promise<void> {
    return watchHeld(answered, {
      scheduler: this.options.scheduler,
      pollMs: this.pollMs,
      acceptAfterMs: this.acceptAfterMs,
      recorded: this.recording !== null,
      now: () => this.now(),
      probe: (signal) => this.probeOnce(signal),
      record: () => this.record(),
      seen: (prediction) => {
        if (prediction?.status !== "starting") this.modelRan = true;
        this.progress(prediction?.logs);
      },
    });
  }

  private probeOnce(signal: AbortSignal): Promise<VendorResponse> {
    return probePrediction(this.call(signal), this.path);
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
