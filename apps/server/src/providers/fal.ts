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
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
  type UpstreamJob,
  type VendorProviderOptions,
} from "./types.js";
import { followOrCancel } from "./upstream/cancel-on-abort.js";
import { progressFromLogs, vendorInput } from "./upstream/input.js";
import { finishWithOutputVideo, locateVideo } from "./upstream/output.js";

/** Where fal's video models put their video, unless a route says otherwise. */
type FalOutput = { video?: { url?: unknown } };

import { VendorClient } from "./upstream/vendor-client.js";
import { VendorError, type VendorResponse, vendorMessage, vendorUrl } from "./upstream/vendor-http.js";

/** fal's queue API. */
export const FAL_QUEUE_URL = "https://queue.fal.run";

/** The fal key is sent as `Authorization: Key <token>`. */
export interface FalProviderOptions extends VendorProviderOptions {
  /** Base URL of the queue API; `FAL_QUEUE_URL` by default. */
  url?: string;
  /** The fal endpoint id, e.g. `fal-ai/some-model/reference-to-video`. */
  model: string;
}

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
    const resumed = context.upstream ? this.resumable(context.upstream) : null;
    const request = resumed ?? (await this.submit(job, context, deadline));
    if (resumed) log?.info({ upstreamId: request.id }, "resuming the fal request");
    else log?.info({ upstreamId: request.id }, "fal accepted the request");

    const videoUrl = await followOrCancel(
      signal,
      async () => {
        if (!resumed) {
          signal.throwIfAborted();
          await context.recordUpstream?.(request);
        }
        return this.follow(request, context, deadline, resumed !== null);
      },
      () => this.cancel(request, log),
    );
    return finishWithOutputVideo(videoUrl, job, context, this.options.allowLocalOutputs);
  }

  /** POST {url}/{model}; a failure here means fal never took the job. */
  private async submit(
    job: ProviderJob,
    context: ProviderContext,
    deadline: number,
  ): Promise<UpstreamJob & { urls: FalUrls }> {
    let answer: VendorResponse;
    try {
      answer = await this.client.call(context.signal, deadline, {
        method: "POST",
        url: this.options.model,
        body: vendorInput(job.input, this.options.mapping),
      });
    } catch (err) {
      if (!(err instanceof VendorError)) throw err;
      throw new VendorError(`submit failed: ${err.message}`, err.status, err.retryable);
    }
    const body = (answer.body ?? {}) as Record<string, unknown>;
    const id = body.request_id;
    if (typeof id !== "string" || id === "") {
      throw new VendorError(`${this.options.name} answered the submit without a request_id`, null, false);
    }
    return { provider: this.options.name, id, urls: this.falUrls(id, body) };
  }

  /** The fal request a previous worker started for this run. */
  private resumable(upstream: UpstreamJob): UpstreamJob & { urls: FalUrls } {
    if (upstream.provider !== this.options.name) {
      throw new VendorError(
        `the run's vendor job belongs to ${upstream.provider}, not ${this.options.name}`,
        null,
        false,
      );
    }
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

  /** Polls the status until the request is COMPLETED; answers the result's video URL. */
  private async follow(
    request: UpstreamJob & { urls: FalUrls },
    context: ProviderContext,
    deadline: number,
    resumed: boolean,
  ): Promise<unknown> {
    const { signal } = context;
    const statusUrl = new URL(request.urls.status_url);
    statusUrl.searchParams.set("logs", "1");
    let reported = 0;
    for (let first = true; ; first = false) {
      if (!(first && resumed)) await sleep(this.options.scheduler, this.pollMs, signal);
      signal.throwIfAborted();
      if (this.client.now() >= deadline) {
        throw new VendorError(
          `${this.options.name} request ${request.id} did not finish by the run's deadline`,
          null,
          true,
        );
      }
      const { body } = await this.client.call(signal, deadline, { method: "GET", url: statusUrl.toString() });
      const status = (body ?? {}) as { status?: unknown; error?: unknown; logs?: unknown };
      if (status.status === "COMPLETED") {
        if (status.error !== undefined && status.error !== null) {
          throw await this.failure(request, status.error, signal, deadline);
        }
        return this.result(request, signal, deadline);
      }
      // IN_QUEUE or IN_PROGRESS (or a state fal adds later): keep following.
      // Below 1 until the video is home.
      const fraction = status.status === "IN_PROGRESS" ? progressFromLogs(status.logs) : undefined;
      if (fraction !== undefined && Math.min(fraction, 0.99) > reported) {
        reported = Math.min(fraction, 0.99);
        context.onProgress(reported);
      }
    }
  }

  /** GET response_url: the model's output, or its error. */
  private async result(
    request: UpstreamJob & { urls: FalUrls },
    signal: AbortSignal,
    deadline: number,
  ): Promise<unknown> {
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
    request: UpstreamJob & { urls: FalUrls },
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
  private async cancel(request: UpstreamJob & { urls: FalUrls }, log: Logger | undefined): Promise<void> {
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
