/**
 * The refvid client: openapi-fetch's typed client (`api`) with auth, retries and timeouts built
 * into its fetch, plus helpers that return data and throw typed errors.
 */
import type {
  Account,
  AnyModelSlug,
  DeletedFile,
  FileUpload,
  Model,
  ModelList,
  PricePreview,
  paths,
  Run,
  RunPage,
  SearchRunsRequest,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookSecret,
} from "@refvid/api-types";
import createClient from "openapi-fetch";
import { ApiPromise, type WithResponse } from "./api-promise.js";
import type {
  AnyModelInput,
  RefvidClient,
  RefvidClientOptions,
  RequestOptions,
  RunOptions,
  SubmitOptions,
} from "./client-types.js";
import { readEnv } from "./env.js";
import { errorFromResponse, RefvidError, RequestTimeoutError, RunFailedError } from "./errors.js";
import { collectRuns, iterateRunPages, iterateRuns } from "./pagination.js";
import { randomUuid } from "./random.js";
import { createRetryingFetch } from "./retry.js";
import { type ConnectStream, streamRun, waitByStream } from "./stream.js";
import { uploadRequest } from "./upload.js";
import { type WaitOptions, waitForRun } from "./wait.js";

export type {
  AnyModelInput,
  CatalogModelSlug,
  RefvidApi,
  RefvidClient,
  RefvidClientOptions,
  RequestOptions,
  RunOptions,
  SubmitOptions,
  UploadBody,
  UploadOptions,
} from "./client-types.js";

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
  ): ApiPromise<T> => {
    let sent: ReturnType<typeof send>;
    try {
      sent = send({ signal, fetch: (request) => retryingFetch(request, { timeoutMs }) });
    } catch (err) {
      // Refused before anything was sent (an upload body that is not bytes): it rejects, as every
      // other failure of a call does, rather than throwing where the call is made.
      return new ApiPromise(Promise.reject(err));
    }
    return new ApiPromise(
      sent.then(toResult, (error) => {
        throw failure(error, signal, timeoutMs);
      }),
    );
  };

  const getRun = (runId: string, requestOptions: RequestOptions = {}) =>
    call<Run>(
      (init) => api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } }, ...init }),
      requestOptions,
    );

  const searchRuns = (request: SearchRunsRequest = {}, requestOptions: RequestOptions = {}) =>
    call<RunPage>((init) => api.POST("/v1/runs/search", { body: request, ...init }), requestOptions);

  /** Any model's run, built-in or not: the generic operation, `POST /v1/run/{lab}/{model}/{category}`. */
  const submit = (slug: AnyModelSlug, input: AnyModelInput, submitOptions: SubmitOptions = {}) => {
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
            input,
            webhook_url: submitOptions.webhookUrl,
            webhook_events: submitOptions.webhookEvents,
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
    previewPrice: (slug: AnyModelSlug, input: AnyModelInput, requestOptions: RequestOptions = {}) =>
      call<PricePreview>(
        (init) => api.POST("/v1/pricing/preview", { body: { endpoint: slug, input }, ...init }),
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
    uploadFile: (file, uploadOptions = {}) =>
      call<FileUpload>(
        (init) => api.POST("/v1/files", { ...uploadRequest(file, uploadOptions), ...init }),
        uploadOptions,
      ),
    deleteUpload: (fileId, requestOptions = {}) =>
      call<DeletedFile>(
        (init) => api.DELETE("/v1/files/{file_id}", { params: { path: { file_id: fileId } }, ...init }),
        requestOptions,
      ),
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
    run: async (slug: AnyModelSlug, input: AnyModelInput, runOptions: RunOptions = {}) => {
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
