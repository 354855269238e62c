/**
 * The refvid client: openapi-fetch's typed client (`api`) with auth, retries and timeouts built
 * into its fetch, plus helpers that return data and throw typed errors.
 */
import type {
  Account,
  components,
  Model,
  ModelInputs,
  ModelList,
  ModelSlug,
  PricePreview,
  PricePreviewRequest,
  paths,
  Run,
  RunPage,
  SearchRunsRequest,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookSecret,
} from "@refvid/api-types";
import createClient, { type Client } from "openapi-fetch";
import { ApiPromise, type WithResponse } from "./api-promise.js";
import { readEnv } from "./env.js";
import { errorFromResponse, RefvidError, RequestTimeoutError, RunFailedError } from "./errors.js";
import {
  collectRuns,
  iterateRunPages,
  iterateRuns,
  type PaginationOptions,
  type RunFilters,
} from "./pagination.js";
import { randomUuid } from "./random.js";
import { createRetryingFetch, type RetryOptions } from "./retry.js";
import { type ConnectStream, type StreamOptions, streamRun, waitByStream } from "./stream.js";
import { type WaitOptions, waitForRun } from "./wait.js";

/** The raw openapi-fetch client, typed by the refvid OpenAPI document. */
export type RefvidApi = Client<paths>;

/** Options for {@link createRefvidClient}. */
export interface RefvidClientOptions {
  /** Root URL of the API, e.g. `https://api.example.com` (no `/v1`). Default: `REFVID_BASE_URL`. */
  baseUrl?: string;
  /** An `sk-live-…` or `sk-test-…` key. Default: `REFVID_API_KEY`. */
  apiKey?: string;
  /** How the key is sent in `Authorization`: `Key sk-…` (default) or `Bearer sk-…`. */
  authScheme?: "Key" | "Bearer";
  /** The fetch to use. Default: `globalThis.fetch`, looked up on each request. */
  fetch?: typeof fetch;
  /** Retry policy for 429, 5xx, network errors and timeouts; `{ maxRetries: 0 }` turns it off. */
  retry?: RetryOptions;
  /**
   * How long one attempt of a request may take, response body included, before it fails with a
   * {@link RequestTimeoutError} (after retries, when the request may be retried). A method's own
   * `timeoutMs` overrides it. `0` for no limit. Default 600 000 (10 minutes), which also bounds
   * each attempt of a `sync: true` submit.
   */
  timeoutMs?: number;
  /** `User-Agent` header. Default `refvid-client`. */
  userAgent?: string;
}

/** Options every single-request method accepts. */
export interface RequestOptions {
  /** Aborting it cancels the request and any retry wait; the call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** This call's {@link RefvidClientOptions.timeoutMs}: a limit on each attempt, `0` for none. */
  timeoutMs?: number;
}

/** Options for {@link RefvidClient.submit}. */
export interface SubmitOptions extends RequestOptions {
  /** URL to call with a signed `run.*` event once the run is terminal. */
  webhookUrl?: string;
  /** Hold the response until the run is terminal. */
  sync?: boolean;
  /** Your key-value pairs, echoed on the run and searchable. */
  metadata?: components["schemas"]["Metadata"];
  /**
   * `Idempotency-Key` for the submit. Default: a fresh UUID, which makes the submit safe to
   * retry (the same key is sent on every retry). Pass your own to dedupe across processes, or
   * `false` to send none, in which case the submit is never retried.
   */
  idempotencyKey?: string | false;
}

/**
 * Options for {@link RefvidClient.run}: submit options plus wait options. The one `signal` covers
 * both steps; `timeoutMs` is the wait's deadline ({@link WaitOptions.timeoutMs}), while the submit
 * and each poll are bounded by the client's `timeoutMs`.
 */
export interface RunOptions extends Omit<SubmitOptions, "timeoutMs">, WaitOptions {
  /**
   * Whether a run that ends `failed` or `timeout` rejects with a {@link RunFailedError} (which
   * carries the run). Default `true`; `false` resolves with such runs. A `cancelled` run always
   * resolves, since cancelling is something a caller does on purpose; so does a terminal status
   * newer than this client, which it cannot know to be a failure.
   */
  throwOnFailure?: boolean;
  /**
   * Called with the run as it stands, on each change of status or progress, and at its end. With
   * it, `run()` follows the run's live event stream (polling a server that has none) instead of
   * polling.
   */
  onProgress?: (run: Run) => void;
}

/**
 * A refvid API client. Create it with {@link createRefvidClient}.
 *
 * Methods that send one request return an {@link ApiPromise}: await it for the data, or call
 * `.withResponse()` for `{ data, response, requestId }`. API errors reject with a typed
 * `RefvidError` (which carries `requestId` too), a timed-out request with a `RequestTimeoutError`.
 */
export interface RefvidClient {
  /** The raw openapi-fetch client (auth, retries and timeouts included); returns `{ data, error, response }`, never throws API errors. */
  readonly api: RefvidApi;
  /** Submits a run of model `slug`. Returns the queued run (the terminal run with `sync: true`). */
  submit<S extends ModelSlug>(slug: S, input: ModelInputs[S], options?: SubmitOptions): ApiPromise<Run>;
  /** The run as it stands now. */
  getRun(runId: string, options?: RequestOptions): ApiPromise<Run>;
  /** Cancels a queued or processing run; a run that already ended is a `ConflictError`. */
  cancelRun(runId: string, options?: RequestOptions): ApiPromise<Run>;
  /** Status of the calling key and its organization: wallet, limits, usage. */
  getAccount(options?: RequestOptions): ApiPromise<Account>;
  /** What a run of `slug` with `input` would reserve, without creating it. */
  previewPrice<S extends ModelSlug>(
    slug: S,
    input: ModelInputs[S],
    options?: RequestOptions,
  ): ApiPromise<PricePreview>;
  /** One page of runs matching `request`, newest first. */
  searchRuns(request?: SearchRunsRequest, options?: RequestOptions): ApiPromise<RunPage>;
  /** Every model the server serves, with its input schema, limits and price table. */
  listModels(options?: RequestOptions): ApiPromise<ModelList>;
  /** One model by slug, `<lab>/<model>/<category>`; an unknown slug is a `NotFoundError`. */
  getModel(slug: string, options?: RequestOptions): ApiPromise<Model>;
  /** The organization's webhook signing secret (`whsec_…`), for {@link verifyWebhook}. */
  getWebhookSecret(options?: RequestOptions): ApiPromise<WebhookSecret>;
  /**
   * A new signing secret. The previous one keeps signing beside it for 24 h (a second `v1,`
   * signature), so receivers can switch without missing a delivery.
   */
  rotateWebhookSecret(options?: RequestOptions): ApiPromise<WebhookSecret>;
  /** One page of the webhook delivery log, newest first, with every attempt of each delivery. */
  listWebhookDeliveries(
    filters?: { run_id?: string; state?: WebhookDelivery["state"]; limit?: number; cursor?: string },
    options?: RequestOptions,
  ): ApiPromise<WebhookDeliveryPage>;
  /** One delivery (`msg_…`) and its attempts. */
  getWebhookDelivery(deliveryId: string, options?: RequestOptions): ApiPromise<WebhookDelivery>;
  /** Sends the delivery once more now: the same `webhook-id` and body, freshly signed. */
  redeliverWebhook(deliveryId: string, options?: RequestOptions): ApiPromise<WebhookDelivery>;
  /**
   * Follows the run live over its event stream: yields the run as it stands, each change of
   * status or progress, and the terminal run, then ends. Falls back to polling on a server
   * without the stream; resumes a dropped connection.
   */
  streamRun(runId: string, options?: StreamOptions): AsyncGenerator<Run, void, undefined>;
  /** Polls the run until it is terminal and returns it, whatever its status; see {@link WaitOptions}. */
  waitForRun(runId: string, options?: WaitOptions): Promise<Run>;
  /**
   * Submits a run, then waits for it to end and returns it. Rejects with {@link RunFailedError}
   * when it ends `failed` or `timeout`, unless `throwOnFailure: false`; see {@link RunOptions}.
   */
  run<S extends ModelSlug>(slug: S, input: ModelInputs[S], options?: RunOptions): Promise<Run>;
  /** Every page of runs matching `filters`, fetched lazily. */
  iterateRunPages(
    filters?: RunFilters,
    options?: PaginationOptions,
  ): AsyncGenerator<RunPage, void, undefined>;
  /** Every run matching `filters`, across pages, fetched lazily. */
  iterateRuns(filters?: RunFilters, options?: PaginationOptions): AsyncGenerator<Run, void, undefined>;
  /** Every run matching `filters`, in one array. */
  searchAll(filters?: RunFilters, options?: PaginationOptions): Promise<Run[]>;
}

const DEFAULT_USER_AGENT = "refvid-client";
const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * Turns an openapi-fetch result into data with its response, or throws the typed error for the
 * response. Checks `response.ok` rather than `error`, because openapi-fetch leaves `error`
 * undefined for an empty error body.
 */
function toResult<T>({
  data,
  error,
  response,
}: {
  data?: T;
  error?: unknown;
  response: Response;
}): WithResponse<T> {
  if (!response.ok) throw errorFromResponse(response, error);
  const requestId = response.headers.get("x-request-id") || undefined;
  if (data === undefined) {
    throw new RefvidError({
      status: response.status,
      type: "empty_response",
      message: `HTTP ${response.status} with an empty body where JSON was expected`,
      requestId,
      retryAfterSeconds: undefined,
      body: undefined,
    });
  }
  return { data, response, requestId };
}

/**
 * What a call that did not get a response rejects with: the caller's abort reason when they
 * aborted, a {@link RequestTimeoutError} when the timeout struck while the body was read (the
 * fetch layer reports one that struck earlier itself), else the error as it is.
 */
function failure(error: unknown, signal: AbortSignal | undefined, timeoutMs: number): unknown {
  if (signal?.aborted) return signal.reason;
  if (timeoutMs > 0 && (error as { name?: unknown } | null)?.name === "TimeoutError") {
    return new RequestTimeoutError(timeoutMs);
  }
  return error;
}

/** Splits `<lab>/<model>/<category>` for the generic submit path. */
function splitSlug(slug: string): { lab: string; model: string; category: string } {
  const [lab, model, category, ...rest] = slug.split("/");
  if (!lab || !model || !category || rest.length > 0) {
    throw new TypeError(`model slug must be <lab>/<model>/<category>, got ${JSON.stringify(slug)}`);
  }
  return { lab, model, category };
}

/**
 * Creates a refvid client. `baseUrl` and `apiKey` default to the `REFVID_BASE_URL` and
 * `REFVID_API_KEY` environment variables where the runtime has them (Node, Deno, Bun).
 *
 * @example
 * const refvid = createRefvidClient(); // REFVID_BASE_URL and REFVID_API_KEY
 * const run = await refvid.run("lab-a/model-a/reference-to-video", { prompt: "…" }, { timeoutMs: 600_000 });
 *
 * @throws {TypeError} when neither the option nor the variable gives a base URL or an API key.
 */
export function createRefvidClient(options: RefvidClientOptions = {}): RefvidClient {
  const baseUrl = options.baseUrl ?? readEnv("REFVID_BASE_URL");
  const apiKey = options.apiKey ?? readEnv("REFVID_API_KEY");
  if (!baseUrl) {
    throw new TypeError("no base URL: pass { baseUrl } to createRefvidClient or set REFVID_BASE_URL");
  }
  if (!apiKey) {
    throw new TypeError("no API key: pass { apiKey } to createRefvidClient or set REFVID_API_KEY");
  }
  const clientTimeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  const customFetch = options.fetch;
  // Look the fetch up per request, so that a global fetch replaced after creation is honoured.
  const retryingFetch = createRetryingFetch(() => customFetch ?? globalThis.fetch, options.retry);
  const api = createClient<paths>({
    baseUrl,
    fetch: (request) => retryingFetch(request, { timeoutMs: clientTimeoutMs }),
    headers: {
      Authorization: `${options.authScheme ?? "Key"} ${apiKey}`,
      Accept: "application/json",
      "User-Agent": options.userAgent ?? DEFAULT_USER_AGENT,
    },
  });

  /** Sends one request through `api` with this call's signal and timeout. */
  const call = <T>(
    send: (init: {
      signal: AbortSignal | undefined;
      fetch: (request: Request) => Promise<Response>;
    }) => Promise<{
      data?: T;
      error?: unknown;
      response: Response;
    }>,
    { signal, timeoutMs = clientTimeoutMs }: RequestOptions,
  ): ApiPromise<T> =>
    new ApiPromise(
      send({ signal, fetch: (request) => retryingFetch(request, { timeoutMs }) }).then(toResult, (error) => {
        throw failure(error, signal, timeoutMs);
      }),
    );

  const getRun = (runId: string, requestOptions: RequestOptions = {}) =>
    call<Run>(
      (init) => api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } }, ...init }),
      requestOptions,
    );

  const searchRuns = (request: SearchRunsRequest = {}, requestOptions: RequestOptions = {}) =>
    call<RunPage>((init) => api.POST("/v1/runs/search", { body: request, ...init }), requestOptions);

  const submit = <S extends ModelSlug>(slug: S, input: ModelInputs[S], submitOptions: SubmitOptions = {}) => {
    // One key per submit call, not per attempt: the retrying fetch resends the same request,
    // so every retry carries this key and the server replays instead of creating a second run.
    const key = submitOptions.idempotencyKey === undefined ? randomUuid() : submitOptions.idempotencyKey;
    return call<Run>(
      (init) =>
        api.POST("/v1/run/{lab}/{model}/{category}", {
          params: {
            path: splitSlug(slug),
            header: key === false ? {} : { "Idempotency-Key": key },
          },
          body: {
            // The generic operation types `input` as any object; the signature typed it by slug.
            input,
            webhook_url: submitOptions.webhookUrl,
            sync: submitOptions.sync,
            metadata: submitOptions.metadata,
          },
          ...init,
        }),
      submitOptions,
    );
  };

  const wait = (runId: string, waitOptions: WaitOptions = {}, initial?: Run): Promise<Run> =>
    waitForRun((id, signal) => getRun(id, { signal }), runId, waitOptions, initial);

  /** Opens a run's event stream; a stream has no per-request timeout (it lasts as long as the run). */
  const connectStream: ConnectStream = async (runId, lastEventId, signal) => {
    const { response, error } = await api.GET("/v1/runs/{run_id}/events", {
      params: { path: { run_id: runId }, header: lastEventId ? { "Last-Event-ID": lastEventId } : {} },
      headers: { Accept: "text/event-stream" },
      parseAs: "stream",
      signal,
      fetch: (request: Request) => retryingFetch(request, { timeoutMs: 0 }),
    });
    if (!response.ok) throw errorFromResponse(response, error);
    return response;
  };
  const fetchRun = (id: string, signal: AbortSignal | undefined) => getRun(id, { signal });

  return {
    api,
    submit,
    getRun,
    cancelRun: (runId, requestOptions = {}) =>
      call<Run>(
        (init) => api.POST("/v1/runs/{run_id}/cancel", { params: { path: { run_id: runId } }, ...init }),
        requestOptions,
      ),
    getAccount: (requestOptions = {}) =>
      call<Account>((init) => api.GET("/v1/account", init), requestOptions),
    previewPrice: (slug, input, requestOptions = {}) =>
      call<PricePreview>(
        (init) =>
          api.POST("/v1/pricing/preview", {
            // TypeScript cannot correlate a generic slug with its union member; the signature already did.
            body: { endpoint: slug, input } as PricePreviewRequest,
            ...init,
          }),
        requestOptions,
      ),
    searchRuns,
    listModels: (requestOptions = {}) =>
      call<ModelList>((init) => api.GET("/v1/models", init), requestOptions),
    getModel: (slug, requestOptions = {}) => {
      const [lab = "", model = "", category = ""] = slug.split("/");
      return call<Model>(
        (init) =>
          api.GET("/v1/models/{lab}/{model}/{category}", {
            params: { path: { lab, model, category } },
            ...init,
          }),
        requestOptions,
      );
    },
    getWebhookSecret: (requestOptions = {}) =>
      call<WebhookSecret>((init) => api.GET("/v1/webhooks/secret", init), requestOptions),
    rotateWebhookSecret: (requestOptions = {}) =>
      call<WebhookSecret>((init) => api.POST("/v1/webhooks/secret/rotate", init), requestOptions),
    listWebhookDeliveries: (filters = {}, requestOptions = {}) =>
      call<WebhookDeliveryPage>(
        (init) => api.GET("/v1/webhooks/deliveries", { params: { query: filters }, ...init }),
        requestOptions,
      ),
    getWebhookDelivery: (deliveryId, requestOptions = {}) =>
      call<WebhookDelivery>(
        (init) =>
          api.GET("/v1/webhooks/deliveries/{delivery_id}", {
            params: { path: { delivery_id: deliveryId } },
            ...init,
          }),
        requestOptions,
      ),
    redeliverWebhook: (deliveryId, requestOptions = {}) =>
      call<WebhookDelivery>(
        (init) =>
          api.POST("/v1/webhooks/deliveries/{delivery_id}/redeliver", {
            params: { path: { delivery_id: deliveryId } },
            ...init,
          }),
        requestOptions,
      ),
    streamRun: (runId, streamOptions) => streamRun(connectStream, fetchRun, runId, streamOptions),
    waitForRun: (runId, waitOptions) => wait(runId, waitOptions),
    run: async (slug, input, runOptions = {}) => {
      // `timeoutMs` is the wait's deadline here; the submit keeps the client's request timeout.
      const submitted = await submit(slug, input, { ...runOptions, timeoutMs: undefined });
      const { onProgress } = runOptions;
      const run = onProgress
        ? await waitByStream(connectStream, fetchRun, submitted.run_id, { ...runOptions, onProgress })
        : await wait(submitted.run_id, runOptions, submitted);
      const failed = run.status === "failed" || run.status === "timeout";
      if (failed && (runOptions.throwOnFailure ?? true)) throw new RunFailedError(run);
      return run;
    },
    iterateRunPages: (filters, paginationOptions) => iterateRunPages(searchRuns, filters, paginationOptions),
    iterateRuns: (filters, paginationOptions) => iterateRuns(searchRuns, filters, paginationOptions),
    searchAll: (filters, paginationOptions) => collectRuns(searchRuns, filters, paginationOptions),
  };
}
