import { cogBoxes } from "./cog-box.js";
import { BoxPrediction } from "./cog-prediction.js";
import type { BoxPredictionOptions } from "./cog-prediction-options.js";
import {
  type Provider,
  type ProviderContext,
  ProviderError,
  ProviderFull,
  type ProviderJob,
  type ProviderResult,
  type UpstreamJob,
  type VendorHook,
  type VendorProviderOptions,
} from "./types.js";
import { type HookedJob, hookedJob } from "./upstream/hook-signatures.js";
import { vendorInput } from "./upstream/input.js";
import { finishWithOutputVideo, locateVideo } from "./upstream/output.js";
import { redactSecret, VendorError } from "./upstream/vendor-http.js";

/** The token, if any, is a fronting proxy's, sent as `Authorization: Bearer <token>`; Cog takes none. */
export interface CogProviderOptions extends VendorProviderOptions, BoxPredictionOptions {
  /** Unused: a Cog container serves one model. */
  model?: string;
  /** The provider's name, whose slots the route takes (`name` by default): the one found full. */
  slot?: string;
}

export class CogProvider implements Provider {
  /** Cog fetches the reference URLs itself. */
  readonly usesReferences = false;

  constructor(private readonly options: CogProviderOptions) {
    if (!URL.canParse(options.url)) {
      throw new Error(`Cog provider "${options.name}" needs the container's URL, e.g. http://10.0.0.5:5000`);
    }
  }

  /**
   * An async prediction's end reaches refvid only in its webhook, a video output often inline as a
   * data: URL: up to 64 MiB (a larger one belongs on Cog's upload URL, `--upload-url`).
   */
  readonly hookBodyLimit = 64 * 1024 * 1024;

  /**
   * Cog signs nothing: the webhook URL's per-run token, checked before this, is its credential. The
   * body of a prediction's end is kept: it is the prediction's result (cog-async.ts).
   */
  async readHook(hook: VendorHook): Promise<HookedJob> {
    const job = hookedJob(hook);
    return { ...job, keep: ENDED.includes(job.status ?? "") };
  }

  async cancelUpstream(job: UpstreamJob): Promise<void> {
    const context = { signal: new AbortController().signal, onProgress: () => {}, upstream: job };
    await new BoxPrediction(this.options, job.id, context, this.options.logger).cancel();
  }

  /**
   * Runs the job's prediction. While the box still runs a prediction a stopped run left there
   * (Cog did not cancel it, cog-box.ts), none is started: the provider is full for the worker.
   */
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
    if (cogBoxes.busy(this.options.url, id)) throw new ProviderFull(this.options.slot ?? name);
    const log = this.options.logger?.child({ runId: job.runId, provider: name, upstreamId: id });
    if (context.upstream) log?.info("resuming the run's Cog prediction");
    const prediction = new BoxPrediction(this.options, id, context, log);
    const answer = await prediction.result(vendorInput(job.input, this.options.mapping));
    if (answer.status === "failed") {
      const message = typeof answer.error === "string" && answer.error ? answer.error : "The model failed.";
      throw new ProviderError(redactSecret(message.slice(0, 300), this.options.token));
    }
    if (answer.status === "canceled")
      throw new ProviderError("The prediction was cancelled on the Cog server.");
    const location = await locateVideo(answer.output, this.options.output, firstOutput);
    return finishWithOutputVideo(location, job, context, this.options);
  }
}

const ENDED = ["succeeded", "failed", "canceled"];

/** The output URL (or data: URL), or the first string of a list of outputs. */
function firstOutput(output: unknown): unknown {
  return Array.isArray(output) ? output.find((value) => typeof value === "string" && value !== "") : output;
}
