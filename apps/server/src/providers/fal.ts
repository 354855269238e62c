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
  HookRefused,
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
import { FAL_JWKS_URL, hookJson, verifyFalHook } from "./upstream/hook-signatures.js";
import { progressFromLogs, vendorInput } from "./upstream/input.js";
import { finishWithOutputVideo, locateVideo } from "./upstream/output.js";

/** Where fal's video models put their video, unless a route says otherwise. */
type FalOutput = { video?: { url?: unknown } };

import { VendorClient } from "./upstream/vendor-client.js";
import {
  UnansweredCreate,
  VendorError,
  type VendorResponse,
  vendorMessage,
  vendorUrl,
} from "./upstream/vendor-http.js";

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

/** Namespaces whose app id has three parts (`workflows/owner/app`); otherwise `owner/app`. */
const NAMESPACES = new Set(["workflows", "comfy"]);
/** The wait for a lost create's webhook is twice the route's slow jobs, at least this. */
const MIN_ADOPT_WINDOW_MS = 30_000;
const DEFAULT_ADOPT_WINDOW_MS = 600_000;
/** Jobs whose length sets the wait. */
const TIMED_JOBS = 50;

/** The URLs a fal request is followed by, as fal names them in its submit answer. */
const URL_NAMES = ["status_url", "response_url", "cancel_url"] as const;
type FalUrls = Record<(typeof URL_NAMES)[number], string>;

const CANCEL_TIMEOUT_MS = 5_000;
/**
 * Result answers read here rather than retried: the model's errors (4xx, and 5xx in fal's model
 * error shape). 401/403/404 stay errors of the call; 429 and gateway 5xx are retried.
 */
const RESULT_ANSWERS: readonly number[] = Array.from({ length: 200 }, (_, i) => 400 + i).filter(
  (status) => ![401, 403, 404, 429].includes(status),
);

export class FalProvider implements Provider {
  /** fal fetches the reference URLs itself. */
  readonly usesReferences = false;
  private readonly baseUrl: string;
  private readonly client: VendorClient;
  private readonly pollMs: number;
  /** How long this route's recent jobs took, from the create to COMPLETED (ms). */
  private readonly jobTimes: number[] = [];

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
    this.timeJob(this.client.now() - startedAt);
    return finishWithOutputVideo(videoUrl, job, context, this.options.allowLocalOutputs);
  }

  async readHook(hook: VendorHook): Promise<{ upstreamId: string; status: string | null }> {
    await verifyFalHook(hook, this.options.jwksUrl ?? FAL_JWKS_URL, () => this.client.now());
    const body = hookJson(hook);
    const id = body.request_id;
    if (typeof id !== "string" || id === "" || id !== hook.headers["x-fal-webhook-request-id"]) {
      throw new HookRefused("the fal webhook names no request, or another than it is signed for");
    }
    return { upstreamId: id, status: typeof body.status === "string" ? body.status : null };
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
    const windowMs = Math.min(this.adoptWindowMs(), Math.max(0, deadline - this.client.now()));
    const id = await awaitHookedJob(vendor, {
      windowMs,
      skip: new Set(),
      now: () => this.client.now(),
      signal,
    });
    return id ? { job: this.requestOf(id) } : { none: true, sure: true };
  }

  /** How long to wait for a lost create's webhook: twice the route's slow (p90) jobs, bounded. */
  private adoptWindowMs(): number {
    const most = this.options.adoptWindowMs ?? DEFAULT_ADOPT_WINDOW_MS;
    if (this.jobTimes.length < 5) return most;
    const sorted = [...this.jobTimes].sort((a, b) => a - b);
    const p90 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))] ?? most;
    return Math.min(most, Math.max(MIN_ADOPT_WINDOW_MS, 2 * p90));
  }

  private timeJob(ms: number): void {
    this.jobTimes.push(ms);
    if (this.jobTimes.length > TIMED_JOBS) this.jobTimes.shift();
  }

  /** A request known only by its id: its URLs as fal builds them, under the endpoint's app id. */
  private requestOf(id: string): FalJob {
    const parts = this.options.model.split("/");
    const app = parts.slice(0, NAMESPACES.has(parts[0] ?? "") ? 3 : 2).join("/");
    const base = `${app}/requests/${encodeURIComponent(id)}`;
    return {
      provider: this.options.name,
      id,
      urls: this.falUrls(id, {
        status_url: `${base}/status`,
        response_url: base,
        cancel_url: `${base}/cancel`,
      }),
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
    return { provider: this.options.name, id, urls: this.falUrls(id, body) };
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
    return { ...upstream, urls: this.falUrls(upstream.id, upstream.urls) };
  }

  /** status_url, response_url and cancel_url as fal gave them, on fal's own origin. */
  private falUrls(id: string, given: Record<string, unknown>): FalUrls {
    const urls = {} as FalUrls;
    for (const name of URL_NAMES) {
      const value = given[name];
      if (typeof value !== "string" || value === "") {
        throw new VendorError(`${this.options.name} request ${id} has no ${name}`, null, false);
      }
      urls[name] = vendorUrl(this.baseUrl, value).toString();
    }
    return urls;
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
    let reported = 0;
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
        if (status.error !== undefined && status.error !== null) {
          throw await this.failure(request, status.error, signal, deadline);
        }
        return this.result(request, signal, deadline);
      }
      // IN_QUEUE or IN_PROGRESS (or a state fal adds later): keep following.
      const position =
        status.status === "IN_QUEUE" ? (body as { queue_position?: unknown }).queue_position : null;
      context.onQueuePosition?.(
        Number.isSafeInteger(position) && (position as number) >= 0 ? (position as number) : null,
      );
      // Below 1 until the video is home.
      const fraction = status.status === "IN_PROGRESS" ? progressFromLogs(status.logs) : undefined;
      if (fraction !== undefined && Math.min(fraction, 0.99) > reported) {
        reported = Math.min(fraction, 0.99);
        context.onProgress(reported);
      }
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

/** fal's model errors: any 4xx, or a 5xx that says it is the model's (typed, not retryable). */
function isModelError(answer: VendorResponse): boolean {
  if (answer.status < 500) return true;
  const body = answer.body as { detail?: unknown; error_type?: unknown } | null;
  return (
    answer.headers.get("x-fal-retryable") === "false" ||
    answer.headers.has("x-fal-error-type") ||
    Array.isArray(body?.detail) ||
    typeof body?.error_type === "string"
  );
}

/**
 * fal's message: `detail` as a string, or every `{loc, msg}` as `field: msg` (the `body` prefix
 * dropped). A 422 naming fields is the model refusing the input, and says so.
 */
function falMessage(body: unknown, status?: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const entries = Array.isArray(detail) ? (detail as { loc?: unknown; msg?: unknown }[]) : [];
  const said = entries.flatMap((entry) => {
    const { loc, msg } = entry ?? {};
    if (typeof msg !== "string") return [];
    const field = Array.isArray(loc) ? loc.filter((part, i) => !(i === 0 && part === "body")).join(".") : "";
    return [{ field, msg }];
  });
  if (said.length === 0) return vendorMessage(body);
  const text = said.map(({ field, msg }) => (field ? `${field}: ${msg}` : msg)).join("; ");
  const refused = status === 422 && said.some(({ field }) => field !== "");
  return (refused ? `The model refused the input: ${text}` : text).slice(0, 500);
}
