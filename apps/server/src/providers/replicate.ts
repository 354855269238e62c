/**
 * A model on Replicate, through its predictions API (api.replicate.com): the input is posted to
 * the official model (`owner/name`) or to a version (`owner/name:version`, or the version id), and
 * the prediction is then followed only through the URLs Replicate hands back (`urls.get`,
 * `urls.cancel`), which are kept on the run so that whichever worker holds it follows the same
 * prediction to its end. The video is the output URL (or the first video of a list), downloaded
 * and probed like every vendor output.
 *
 * The create is answered at once (no `Prefer: wait`): the prediction id is recorded before anything
 * waits on it. `Cancel-After` carries the run's deadline, so Replicate itself stops a prediction
 * nobody follows any more (a worker that died, a create whose answer was lost).
 *
 * Replicate checks the input against the model's schema when it is posted: a refusal is a 422
 * "Input validation failed" whose `invalid_fields` name each field (replicate.com/changelog/
 * 2024-05-01-improved-validation-for-api-prediction-payloads), and fails the run with those words.
 */
import type { Logger } from "pino";
import { sleep } from "../clock.js";
import { findLostPrediction } from "./replicate-lost-create.js";
import {
  endedMessage,
  firstVideo,
  invalidFields,
  type Prediction,
  predictionOf,
  type ReplicateTarget,
  replicateTarget,
} from "./replicate-model.js";
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
import { createOnce, forEachOrphan } from "./upstream/create-once.js";
import { type HookedJob, hookedJob, ReplicateHookSecret } from "./upstream/hook-signatures.js";
import { logProgress, vendorInput } from "./upstream/input.js";
import { finishWithOutputVideo, locateVideo } from "./upstream/output.js";
import { VendorClient } from "./upstream/vendor-client.js";
import {
  UnansweredCreate,
  VendorError,
  type VendorRequest,
  type VendorResponse,
  vendorMessage,
  vendorUrl,
} from "./upstream/vendor-http.js";

/** Replicate's API. */
export const REPLICATE_API_URL = "https://api.replicate.com";

/** The API token is sent as `Authorization: Bearer <token>`. */
export interface ReplicateProviderOptions extends VendorProviderOptions {
  /** Base URL of the API; `REPLICATE_API_URL` by default. */
  url?: string;
  /** `owner/name` (an official model), `owner/name:version` or a version id. */
  model: string;
}

type Followed = UpstreamJob & { urls: { get: string; cancel: string } };

const CANCEL_TIMEOUT_MS = 3_000;
/** Replicate refuses a `Cancel-After` shorter than this. */
const MIN_CANCEL_AFTER_S = 5;
/** Webhooks asked for: the start (which names a lost create's prediction early) and the end. */
const HOOK_EVENTS = ["start", "completed"];

export class ReplicateProvider implements Provider {
  /** Replicate fetches the reference URLs itself. */
  readonly usesReferences = false;
  private readonly baseUrl: string;
  private readonly client: VendorClient;
  private readonly pollMs: number;
  private readonly target: ReplicateTarget;
  private readonly hookSecret: ReplicateHookSecret;

  constructor(private readonly options: ReplicateProviderOptions) {
    this.baseUrl = options.url ?? REPLICATE_API_URL;
    this.client = new VendorClient({ ...options, baseUrl: this.baseUrl, scheme: "Bearer" });
    this.pollMs = options.pollMs ?? 1000;
    this.target = replicateTarget(options.model);
    this.hookSecret = new ReplicateHookSecret(this.baseUrl, options.token, () => this.client.now());
  }

  async readHook(hook: VendorHook): Promise<HookedJob> {
    await this.hookSecret.verify(hook);
    return hookedJob(hook);
  }

  async run(job: ProviderJob, context: ProviderContext): Promise<ProviderResult> {
    const { signal } = context;
    signal.throwIfAborted();
    const deadline = context.deadline ?? Number.POSITIVE_INFINITY;
    const log = this.options.logger?.child({ runId: job.runId, provider: this.options.name });
    const submitted = !context.upstream;
    let prediction: Followed;
    let first: Prediction | null = null;
    if (context.upstream) {
      prediction = this.resumable(context.upstream);
      log?.info({ upstreamId: prediction.id }, "resuming the Replicate prediction");
    } else {
      const input = vendorInput(job.input, this.options.mapping);
      const created = await createOnce({
        create: () => this.submit(input, context, deadline),
        find: async (sentAt, findSignal) => {
          const found = await findLostPrediction({
            client: this.client,
            target: this.target,
            vendor: context.vendor,
            followed: (id, urls) => this.followed(id, urls),
            input,
            sentAt,
            deadline,
            signal: findSignal,
          });
          return "job" in found ? { job: { job: found.job, first: null } } : found;
        },
        idOf: (found) => found.job.id,
        vendor: context.vendor,
        now: () => this.client.now(),
        deadline,
        signal,
        log,
      });
      ({ job: prediction, first } = created.job);
      log?.info({ upstreamId: prediction.id }, "Replicate accepted the prediction");
    }
    const following = { prediction };

    const finished = await followOrCancel(
      signal,
      async () => {
        if (submitted) {
          signal.throwIfAborted();
          await context.recordUpstream?.(prediction);
        }
        return this.follow(following, first, context, deadline);
      },
      () => this.cancel(following.prediction, log),
    );
    if (finished.dataRemoved) {
      throw new ProviderError(
        `${this.options.name} prediction ${finished.id} succeeded, but Replicate has removed its output.`,
      );
    }
    const location = await locateVideo(finished.output, this.options.output, firstVideo);
    return finishWithOutputVideo(location, job, context, this.options);
  }

  /** Creates the prediction; a failure here means Replicate never took the job. */
  private async submit(
    input: Record<string, unknown>,
    context: ProviderContext,
    deadline: number,
  ): Promise<{ job: Followed; first: Prediction | null }> {
    const { signal } = context;
    const hookUrl = context.vendor?.hookUrl;
    const hook = hookUrl ? { webhook: hookUrl, webhook_events_filter: HOOK_EVENTS } : {};
    const request: VendorRequest =
      this.target.kind === "model"
        ? {
            method: "POST",
            url: `v1/models/${encodeURIComponent(this.target.owner)}/${encodeURIComponent(this.target.name)}/predictions`,
            body: { input, ...hook },
          }
        : { method: "POST", url: "v1/predictions", body: { version: this.target.id, input, ...hook } };
    const seconds = Math.floor((deadline - this.client.now()) / 1000);
    if (Number.isFinite(seconds) && seconds >= MIN_CANCEL_AFTER_S) {
      request.headers = { "cancel-after": `${seconds}s` };
    }
    let answer: VendorResponse;
    try {
      answer = await this.client.call(signal, deadline, { ...request, accept: [422], creates: true });
    } catch (err) {
      if (!(err instanceof VendorError)) throw err;
      const Kind = err instanceof UnansweredCreate ? UnansweredCreate : VendorError;
      throw new Kind(`submit failed: ${err.message}`, err.status, err.retryable);
    }
    if (answer.status === 422) throw this.refused(request, answer.body);
    const first = predictionOf(this.options.name, answer, "the submit");
    const urls = (answer.body as { urls?: unknown }).urls;
    const given = urls && typeof urls === "object" ? (urls as Record<string, unknown>) : {};
    return { job: this.followed(first.id, given), first };
  }

  /**
   * A 422 to the create: the model refusing the input (`invalid_fields`), which ends the run with
   * each field in Replicate's words, or any other refusal (an unknown version), as before.
   */
  private refused(request: VendorRequest, body: unknown): Error {
    const named = invalidFields(body);
    if (named.length > 0) {
      return new ProviderError(
        this.client.redact(`The model refused the input: ${named.join("; ")}`.slice(0, 500)),
      );
    }
    const path = vendorUrl(this.baseUrl, request.url).pathname;
    return new VendorError(
      this.client.redact(
        `submit failed: ${this.options.name} answered 422 to ${request.method} ${path}: ${vendorMessage(body)}`,
      ),
      422,
      false,
    );
  }

  /** The prediction a previous worker started for this run. */
  private resumable(upstream: UpstreamJob): Followed {
    if (upstream.provider !== this.options.name) {
      throw new VendorError(
        `the run's vendor job belongs to ${upstream.provider}, not ${this.options.name}`,
        null,
        false,
      );
    }
    return this.followed(upstream.id, upstream.urls);
  }

  /** The prediction's URLs as Replicate gave them (on the API's origin), or built from its id. */
  private followed(id: string, given: Record<string, unknown>): Followed {
    const urls: Record<string, string> = {};
    for (const [name, value] of Object.entries(given)) {
      if (typeof value === "string" && value !== "") urls[name] = value;
    }
    const own = `v1/predictions/${encodeURIComponent(id)}`;
    const get = vendorUrl(this.baseUrl, urls.get ?? own).toString();
    const cancel = vendorUrl(this.baseUrl, urls.cancel ?? `${own}/cancel`).toString();
    return { provider: this.options.name, id, urls: { ...urls, get, cancel } };
  }

  /**
   * Follows the prediction until it ends; answers it when it succeeded. Between status calls it
   * waits the poll interval or, with webhooks on, the backstop, ending early on a webhook.
   */
  private async follow(
    following: { prediction: Followed },
    first: Prediction | null,
    context: ProviderContext,
    deadline: number,
  ): Promise<Prediction> {
    const { signal, vendor } = context;
    const interval = vendor?.hookUrl ? vendor.backstopMs : this.pollMs;
    const seen = new Set([following.prediction.id]);
    const progress = logProgress(context.onProgress);
    let current = first;
    for (;;) {
      if (current) {
        progress(current.logs);
        if (current.status === "succeeded") return current;
        const ended = endedMessage(this.options.name, current);
        if (ended) throw new ProviderError(this.client.redact(ended));
        const left = deadline - this.client.now();
        if (left <= 0) {
          throw new VendorError(
            `${this.options.name} prediction ${following.prediction.id} did not finish by the run's deadline`,
            null,
            false,
          );
        }
        if (!vendor) await sleep(this.options.scheduler, Math.min(interval, left), signal);
        else if (await vendor.pause(Math.min(interval, left), signal)) {
          await this.takeOrphans(following, current, seen, context, deadline);
        }
        signal.throwIfAborted();
      }
      current = predictionOf(
        this.options.name,
        await this.client.call(signal, deadline, { method: "GET", url: following.prediction.urls.get }),
        "the status call",
      );
    }
  }

  /**
   * Webhooks naming another prediction of this run: a lost create's, found after the run made
   * another. Whichever of the two has not started is cancelled, and the run follows the other;
   * when both run, the orphan is cancelled and the run's vendor log says two ran.
   */
  private async takeOrphans(
    following: { prediction: Followed },
    current: Prediction,
    seen: Set<string>,
    context: ProviderContext,
    deadline: number,
  ): Promise<void> {
    const log = this.options.logger;
    await forEachOrphan(context.vendor, seen, async (id, vendor) => {
      const orphan = this.followed(id, {});
      const answer = await this.client
        .call(context.signal, deadline, { method: "GET", url: orphan.urls.get, once: true })
        .catch(() => null);
      const status = (answer?.body as { status?: unknown } | null)?.status;
      if (status === "processing" && current.status === "starting") {
        const previous = following.prediction;
        await this.cancel(previous, log);
        await vendor.log("cancelled", previous.id, "another prediction of the run started first");
        following.prediction = orphan;
        await context.recordUpstream?.(orphan);
        await vendor.log("adopted", id, null);
        return;
      }
      if (status === "processing" || status === "succeeded") {
        await vendor.log("uncertain", id, "two predictions of the run ran");
      }
      await this.cancel(orphan, log);
      await vendor.log("cancelled", id, "the run follows another prediction");
    });
  }

  async cancelUpstream(job: UpstreamJob): Promise<void> {
    await this.cancel(this.resumable(job), this.options.logger);
  }

  /** POST urls.cancel: one try with a short time limit; the prediction may have ended already. */
  private async cancel(prediction: Followed, log: Logger | undefined): Promise<void> {
    await this.client.cancelOnce(
      { method: "POST", url: prediction.urls.cancel },
      { timeoutMs: CANCEL_TIMEOUT_MS, log, what: "Replicate prediction", upstreamId: prediction.id },
    );
  }
}
