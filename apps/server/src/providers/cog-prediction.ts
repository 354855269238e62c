import type { Logger } from "pino";
import { sleep } from "../clock.js";
import {
  type AsyncFollow,
  hooksSoFar,
  lostPrediction,
  priorPrediction,
  takenPrediction,
} from "./cog-async.js";
import { cogBoxes, type LeftPrediction } from "./cog-box.js";
import { CogBoxCalls } from "./cog-box-calls.js";
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
import {
  type BoxPredictionOptions,
  DEFAULT_HOOK_WINDOW_MS,
  predictionHeaders,
} from "./cog-prediction-options.js";
import { watchHeld } from "./cog-probe.js";
import { type LostAnswer, recoverLostAnswer } from "./cog-recovery.js";
import { type ProviderContext, ProviderError, type UpstreamJob } from "./types.js";
import { cancelsUpstream, cancelsUpstreamAfter } from "./upstream/cancel-on-abort.js";
import { logProgress } from "./upstream/input.js";
import { redactSecret, retryAfterMs, VendorError, vendorUrl } from "./upstream/vendor-http.js";

export type { CogPrediction } from "./cog-held-put.js";

/**
 * One run's prediction on a Cog box. Async (`Prefer: respond-async`, cog-async.ts) when the run's
 * webhook can reach refvid, its end then coming by webhook; otherwise created by a held sync PUT.
 * Watched by probes, cancelled when abandoned.
 */
export class BoxPrediction {
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
  /** Reports the progress a prediction's logs show. */
  private readonly progress: (logs: unknown) => void;
  private readonly deadline: number;
  private readonly path: string;
  private readonly pollMs: number;
  private readonly acceptAfterMs: number;
  private readonly maxBackoffMs: number;
  /** Async: the webhook reaches refvid and the box has not answered an async create synchronously. */
  private readonly async: boolean;
  private readonly box: CogBoxCalls;

  constructor(
    private readonly options: BoxPredictionOptions,
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
    this.async = Boolean(context.vendor?.hookUrl) && cogBoxes.answersSync(options.url) === null;
    this.box = new CogBoxCalls(options, this.path, this.deadline, log);
    this.progress = logProgress(context.onProgress);
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
   * while its request is open is left on the box (cog-box.ts) until it is seen to end. `leave`
   * cancels nothing (an async prediction whose record was refused: whoever holds the run finds it
   * by its id). An async prediction is never left on the box: while it runs Cog answers another
   * create 409, which waits.
   */
  private stop(reason: unknown, leave = false): void {
    if (this.stopping) return;
    if (leave || !(this.mayRun && !this.ended && cancelsUpstream(this.context.signal))) {
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

  /**
   * The PUT (held until the prediction ends, or async), repeated while Cog is busy, not ready or
   * unreachable, until the deadline.
   */
  private async create(input: Record<string, unknown>): Promise<CogPrediction> {
    const work = this.work.signal;
    const url = vendorUrl(this.options.url, this.path);
    // Cog posts the prediction to the run's vendor webhook URL (its token is the check): its end,
    // and for an async prediction its start too, which shows a prediction whose answer was lost.
    const hookUrl = this.context.vendor?.hookUrl;
    const events = this.async ? ["start", "completed"] : ["completed"];
    const hook = hookUrl ? { webhook: hookUrl, webhook_events_filter: events } : {};
    const payload = JSON.stringify({ input, ...hook });
    if (this.async) {
      const prior = await priorPrediction(this.follower(), this.context.upstream != null);
      if (prior) return prior;
    }
    for (let failures = 0; ; ) {
      work.throwIfAborted();
      // Webhooks about the run's prediction before this PUT are not about the one it makes.
      const since = this.async ? await hooksSoFar(this.follower()) : 0;
      this.mayRun = true;
      this.modelRan = false;
      const answered = new AbortController();
      const watching = this.watch(answered.signal);
      const held = openRequest(url, payload, predictionHeaders(this.options.token, this.async));
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
      if (ended) {
        if (this.async) this.answeredSync();
        return ended;
      }
      if (answer?.status === 202 && this.async) {
        const taken = await takenPrediction(this.follower(), since);
        if (taken) return taken;
        continue;
      }
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
      if (lost && this.async) {
        const found = await lostPrediction(this.follower(), failure, since);
        if (found) return found;
        continue;
      }
      if (lost) {
        await this.afterLostAnswer(failure);
        continue;
      }
      if (!failure.retryable) throw this.failed(failure);
      await this.backOff(failures++, retryAfterOf(answer), failure);
    }
  }

  /** What following the async prediction works with (cog-async.ts). */
  private follower(): AsyncFollow {
    const vendor = this.context.vendor;
    if (!vendor) throw new Error("an async Cog prediction needs the run's vendor side");
    const window = this.options.adoptWindowMs ?? DEFAULT_HOOK_WINDOW_MS;
    return {
      id: this.id,
      name: this.options.name,
      vendor,
      log: this.log,
      signal: this.work.signal,
      now: () => this.now(),
      pollMs: this.pollMs,
      graceMs: Math.min(this.options.lostGraceMs ?? 30_000, window),
      hookWindowMs: window,
      probe: (signal) => this.box.probe(signal),
      probesSee: () => this.box.probesSee(this.work.signal),
      record: () => this.record(),
      progress: (logs) => this.progress(logs),
    };
  }

  /** The box answered a prediction asked async with its end: it does not take `Prefer`. */
  private answeredSync(): void {
    this.log?.warn(
      "the box answered an async prediction when it ended (a Cog without async predictions, or a " +
        "proxy dropping the Prefer header): its predictions are held requests from now on",
    );
    cogBoxes.answeredSync(this.options.url, this.options.clock.now());
  }

  /** Probes and cancels until none of the run is in flight (cog-recovery.ts). */
  private afterLostAnswer(failure: VendorError): Promise<void> {
    const lost: LostAnswer = {
      id: this.id,
      vendor: this.context.vendor,
      log: this.log,
      signal: this.work.signal,
      modelRan: this.modelRan,
      probe: (signal) => this.box.probe(signal),
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
      probe: (signal) => this.box.probe(signal),
      record: () => this.record(),
      seen: (prediction) => {
        if (prediction?.status !== "starting") this.modelRan = true;
        this.progress(prediction?.logs);
      },
    });
  }

  /** Keeps the prediction on the run, once; a refusal (the lease is gone) stops it. */
  private record(): void {
    if (this.recording) return;
    const job: UpstreamJob = { provider: this.options.name, id: this.id, urls: {} };
    this.log?.info("Cog took the prediction");
    this.recording = Promise.resolve()
      .then(() => this.context.recordUpstream?.(job))
      .catch((err: unknown) => {
        this.stop(err, this.async);
        throw err;
      });
    this.recording.catch(() => {});
  }

  /** Tells Cog to cancel the prediction; true when it accepted. */
  cancel(): Promise<boolean> {
    return this.box.cancel();
  }

  /** The error of a prediction Cog never took says so: the worker may try another route. */
  private failed(err: VendorError): VendorError {
    const message = redactSecret(err.message, this.options.token);
    return new VendorError(this.recording ? message : `submit failed: ${message}`, err.status, err.retryable);
  }

  private now(): number {
    return this.options.clock.now().getTime();
  }
}
