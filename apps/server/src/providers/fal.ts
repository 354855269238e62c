/**
 * A fal model behind fal's queue API (queue.fal.run): the input is submitted to the endpoint id,
 * then followed only through the URLs fal hands back — `status_url` (with its logs, for
 * progress), `response_url` for the result and `cancel_url` — which are kept on the run so that
 * whichever worker holds it follows the same fal request to its end. The video is `video.url` of
 * the result, downloaded and probed like every vendor output.
 *
 * fal takes any input into its queue; a model that refuses it ends the request at once, its status
 * carrying only `error` ("Invalid status code: 422") and its result the model's `detail`, one
 * `{loc, msg, type}` per field (docs.fal.ai/model-endpoints/webhooks, docs.fal.ai/errors). So a
 * failed request's message is read from its result.
 */
import type { Logger } from "pino";
import { sleep } from "../clock.js";
import {
  type FalOutput,
  type FalUrls,
  falMessage,
  falUrls,
  isModelError,
  RESULT_ANSWERS,
  requestPaths,
} from "./fal-protocol.js";
import {
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
  type UpstreamJob,
  type VendorHook,
  type VendorProviderOptions,
} from "./types.js";
import { followOrCancel } from "./upstream/cancel-on-abort.js";
import { awaitHookedJob, createOnce, type Found, forEachOrphan } from "./upstream/create-once.js";
import { FAL_JWKS_URL, type HookedJob, readFalHook } from "./upstream/hook-signatures.js";
import { logProgress, vendorInput } from "./upstream/input.js";
import { JobTimes } from "./upstream/job-times.js";
import { finishWithOutputVideo, locateVideo } from "./upstream/output.js";
import { VendorClient } from "./upstream/vendor-client.js";
import { UnansweredCreate, VendorError, type VendorResponse, vendorMessage } from "./upstream/vendor-http.js";

/** fal's queue API. */
export const FAL_QUEUE_URL = "https://queue.fal.run";

/** The fal key is sent as `Authorization: Key <token>`. */
export interface FalProviderOptions extends VendorProviderOptions {
  /** Base URL of the queue API; `FAL_QUEUE_URL` by default. */
  url?: string;
  /** The fal endpoint id, e.g. `fal-ai/some-model/reference-to-video`. */
  model: string;
  /** Where fal publishes the keys its webhooks are signed with; `FAL_JWKS_URL` by default. */
  jwksUrl?: string;
}

type FalJob = UpstreamJob & { urls: FalUrls };

const CANCEL_TIMEOUT_MS = 5_000;
/** The longest wait for a lost create's webhook, unless the route says (`adopt_window_ms`). */
const DEFAULT_ADOPT_WINDOW_MS = 600_000;

export class FalProvider implements Provider {
  /** fal fetches the reference URLs itself. */
  readonly usesReferences = false;
  private readonly baseUrl: string;
  private readonly client: VendorClient;
  private readonly pollMs: number;
  /** How long this route's recent jobs took, from the create to COMPLETED (ms). */
  private readonly jobTimes = new JobTimes();

  constructor(private readonly options: FalProviderOptions) {
    this.baseUrl = options.url ?? FAL_QUEUE_URL;
    this.client = new VendorClient({ ...options, baseUrl: this.baseUrl, scheme: "Key" });
    this.pollMs = options.pollMs ?? 1000;
  }

  async run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult> {
    const { signal } = context;
    signal.throwIfAborted();
    const deadline = context.deadline ?? Number.POSITIVE_INFINITY;
    const log = this.options.logger?.child({ runId: job.runId });
    const startedAt = this.client.now();
    const resumed = context.upstream ? this.resumable(context.upstream) : null;
    let request: FalJob;
    let adopted = false;
    if (resumed) {
      request = resumed;
      log?.info({ upstreamId: request.id }, "resuming the fal request");
    } else {
      ({ job: request, adopted } = await createOnce({
        create: () => this.submit(job, context, deadline),
        find: (_sentAt, findSignal) => this.findLost(context, deadline, findSignal),
        idOf: (found) => found.id,
        vendor: context.vendor,
        now: () => this.client.now(),
        deadline,
        signal,
        log,
      }));
      log?.info({ upstreamId: request.id }, "fal accepted the request");
    }
    const following = { request };

    const videoUrl = await followOrCancel(
      signal,
      async () => {
        if (!resumed) {
          signal.throwIfAborted();
          await context.recordUpstream?.(request);
        }
        return this.follow(following, context, deadline, resumed !== null || adopted);
      },
      () => this.cancel(following.request, log),
    );
    this.jobTimes.record(this.client.now() - startedAt);
    return finishWithOutputVideo(videoUrl, job, context, this.options);
  }

  readHook(hook: VendorHook): Promise<HookedJob> {
    return readFalHook(hook, this.options.jwksUrl ?? FAL_JWKS_URL, () => this.client.now());
  }

  /**
   * After a lost submit answer: fal has no list of requests and no idempotency key, but every
   * submit names the run in its webhook URL, so the request it made calls back when it ends. Waits
   * for that webhook (twice the route's slow jobs, within the run's time); without webhooks there
   * is no way to know, and the run says so.
   */
  private async findLost(
    context: ProviderContext,
    deadline: number,
    signal: AbortSignal,
  ): Promise<Found<FalJob>> {
    const vendor = context.vendor;
    if (!vendor?.hookUrl) return { none: true, sure: false };
    const most = this.options.adoptWindowMs ?? DEFAULT_ADOPT_WINDOW_MS;
    const windowMs = Math.min(this.jobTimes.waitMs(most), Math.max(0, deadline - this.client.now()));
    const id = await awaitHookedJob(vendor, { windowMs, now: () => this.client.now(), signal });
    return id ? { job: this.requestOf(id) } : { none: true, sure: true };
  }

  /** A request known only by its id: its URLs as fal builds them, under the endpoint's app id. */
  private requestOf(id: string): FalJob {
    return {
      provider: this.options.name,
      id,
      urls: falUrls(this.baseUrl, this.options.name, id, requestPaths(this.options.model, id)),
    };
  }

  /** POST {url}/{model}; a failure here means fal never took the job. */
  private async submit(job: ProviderJob, context: ProviderContext, deadline: number): Promise<FalJob> {
    let answer: VendorResponse;
    const hookUrl = context.vendor?.hookUrl;
    const url = hookUrl
      ? `${this.options.model}?fal_webhook=${encodeURIComponent(hookUrl)}`
      : this.options.model;
    try {
      answer = await this.client.call(context.signal, deadline, {
        method: "POST",
        url,
        body: vendorInput(job.input, this.options.mapping),
        creates: true,
      });
    } catch (err) {
      if (!(err instanceof VendorError)) throw err;
      const Kind = err instanceof UnansweredCreate ? UnansweredCreate : VendorError;
      throw new Kind(`submit failed: ${err.message}`, err.status, err.retryable);
    }
    const body = (answer.body ?? {}) as Record<string, unknown>;
    const id = body.request_id;
    if (typeof id !== "string" || id === "") {
      throw new VendorError(`${this.options.name} answered the submit without a request_id`, null, false);
    }
    return { provider: this.options.name, id, urls: falUrls(this.baseUrl, this.options.name, id, body) };
  }

  /** The fal request a previous worker started for this run. */
  private resumable(upstream: UpstreamJob): FalJob {
    if (upstream.provider !== this.options.name) {
      throw new VendorError(
        `the run's vendor job belongs to ${upstream.provider}, not ${this.options.name}`,
        null,
        false,
      );
    }
    // A job known by its id alone (a webhook's) has its URLs built the way fal builds them.
    if (!upstream.urls.status_url) return this.requestOf(upstream.id);
    return { ...upstream, urls: falUrls(this.baseUrl, this.options.name, upstream.id, upstream.urls) };
  }

  /**
   * Follows the request until it is COMPLETED; answers the result's video URL. Between status
   * calls it waits the poll interval or, with webhooks on, the backstop, ending early when a
   * webhook for the run arrives.
   */
  private async follow(
    following: { request: FalJob },
    context: ProviderContext,
    deadline: number,
    resumed: boolean,
  ): Promise<unknown> {
    const { signal, vendor } = context;
    const interval = vendor?.hookUrl ? vendor.backstopMs : this.pollMs;
    const seen = new Set([following.request.id]);
    const progress = logProgress(context.onProgress);
    // Whether the last position passed on was a place in the queue: a request seen queued, then
    // done (it ran between two polls), has left the queue too.
    let queued = false;
    for (let first = true; ; first = false) {
      if (!(first && resumed)) {
        if (!vendor) await sleep(this.options.scheduler, interval, signal);
        else if (await vendor.pause(interval, signal))
          await this.takeOrphans(following, seen, context, deadline);
      }
      signal.throwIfAborted();
      const request = following.request;
      if (this.client.now() >= deadline) {
        throw new VendorError(
          `${this.options.name} request ${request.id} did not finish by the run's deadline`,
          null,
          true,
        );
      }
      const statusUrl = new URL(request.urls.status_url);
      statusUrl.searchParams.set("logs", "1");
      const { body } = await this.client.call(signal, deadline, { method: "GET", url: statusUrl.toString() });
      const status = (body ?? {}) as { status?: unknown; error?: unknown; logs?: unknown };
      if (status.status === "COMPLETED") {
        if (queued) context.onQueuePosition?.(null);
        if (status.error !== undefined && status.error !== null) {
          throw await this.failure(request, status.error, signal, deadline);
        }
        return this.result(request, signal, deadline);
      }
      // IN_QUEUE or IN_PROGRESS (or a state fal adds later): keep following.
      const position =
        status.status === "IN_QUEUE" ? (body as { queue_position?: unknown }).queue_position : null;
      const known = Number.isSafeInteger(position) && (position as number) >= 0;
      context.onQueuePosition?.(known ? (position as number) : null);
      queued = known;
      if (status.status === "IN_PROGRESS") progress(status.logs);
    }
  }

  /**
   * Webhooks naming another request of this run: a lost create's, found after the run made
   * another. fal calls back only once a request has ended, so an orphan that succeeded is done and
   * paid: it becomes the run's request and the one followed so far is cancelled. One that failed
   * is only logged; one still running (never, from fal) is cancelled.
   */
  private async takeOrphans(
    following: { request: FalJob },
    seen: Set<string>,
    context: ProviderContext,
    deadline: number,
  ): Promise<void> {
    const log = this.options.logger;
    await forEachOrphan(context.vendor, seen, async (id, vendor) => {
      const orphan = this.requestOf(id);
      const answer = await this.client
        .call(context.signal, deadline, { method: "GET", url: orphan.urls.status_url, once: true })
        .catch(() => null);
      const status = (answer?.body ?? {}) as { status?: unknown; error?: unknown };
      if (status.status !== "COMPLETED") {
        await this.cancel(orphan, log);
        await vendor.log("cancelled", id, "the run follows another request");
      } else if (status.error === undefined || status.error === null) {
        const previous = following.request;
        await this.cancel(previous, log);
        await vendor.log("cancelled", previous.id, "another request of the run finished first");
        following.request = orphan;
        await context.recordUpstream?.(orphan);
        await vendor.log("adopted", id, null);
      }
    });
  }

  /** GET response_url: the model's output, or its error. */
  private async result(request: FalJob, signal: AbortSignal, deadline: number): Promise<unknown> {
    for (;;) {
      const answer = await this.client.call(signal, deadline, {
        method: "GET",
        url: request.urls.response_url,
        accept: RESULT_ANSWERS,
      });
      if (answer.status < 300) {
        return locateVideo(
          answer.body,
          this.options.output,
          (body) => (body as FalOutput | null)?.video?.url,
        );
      }
      if (isModelError(answer)) {
        throw new ProviderError(this.client.redact(falMessage(answer.body, answer.status)));
      }
      // A gateway error in front of a finished request: ask again after a poll interval.
      if (this.client.now() + this.pollMs >= deadline) {
        throw new VendorError(
          `${this.options.name} answered ${answer.status} to the result of ${request.id}: ${vendorMessage(answer.body)}`,
          answer.status,
          true,
        );
      }
      await sleep(this.options.scheduler, this.pollMs, signal);
      signal.throwIfAborted();
    }
  }

  /**
   * Why a request fell: the model's error from response_url (which fields, in the model's words),
   * or the status's `error` when the result does not tell. One try: the status has said enough.
   */
  private async failure(
    request: FalJob,
    error: unknown,
    signal: AbortSignal,
    deadline: number,
  ): Promise<ProviderError> {
    const said = new ProviderError(this.client.redact(falMessage({ detail: error })));
    try {
      const answer = await this.client.call(signal, deadline, {
        method: "GET",
        url: request.urls.response_url,
        accept: RESULT_ANSWERS,
        once: true,
      });
      if (answer.status < 400 || !isModelError(answer)) return said;
      return new ProviderError(this.client.redact(falMessage(answer.body, answer.status)));
    } catch (err) {
      if (signal.aborted) throw err;
      return said;
    }
  }

  async cancelUpstream(job: UpstreamJob): Promise<void> {
    await this.cancel(this.resumable(job), this.options.logger);
  }

  /** PUT cancel_url: one try with a short time limit; fal may have finished already. */
  private async cancel(request: FalJob, log: Logger | undefined): Promise<void> {
    await this.client.cancelOnce(
      { method: "PUT", url: request.urls.cancel_url, accept: [400, 404] },
      { timeoutMs: CANCEL_TIMEOUT_MS, log, what: "fal request", upstreamId: request.id },
    );
  }
}
