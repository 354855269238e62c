/**
 * The refvid client: openapi-fetch's typed client (`api`) with auth and retries built into its
 * fetch, plus helpers that return data and throw typed errors.
 */
import { randomUUID } from "node:crypto";
import type {
  Account,
  components,
  ModelInputs,
  ModelSlug,
  PricePreview,
  PricePreviewRequest,
  paths,
  Run,
  RunPage,
  SearchRunsRequest,
} from "@refvid/api-types";
import createClient, { type Client } from "openapi-fetch";
import { errorFromResponse, RefvidError } from "./errors.js";
import {
  collectRuns,
  iterateRunPages,
  iterateRuns,
  type PaginationOptions,
  type RunFilters,
} from "./pagination.js";
import { createRetryingFetch, type RetryOptions } from "./retry.js";
import { type WaitOptions, waitForRun } from "./wait.js";

/** The raw openapi-fetch client, typed by the refvid OpenAPI document. */
export type RefvidApi = Client<paths>;

/** Body of `GET /v1/webhooks/secret`. */
export type WebhookSecret = components["schemas"]["WebhookSecret"];

/** Options for {@link createRefvidClient}. */
export interface RefvidClientOptions {
  /** Root URL of the API, e.g. `https://api.example.com` (no `/v1`). */
  baseUrl: string;
  /** An `sk-live-…` or `sk-test-…` key. */
  apiKey: string;
  /** How the key is sent in `Authorization`: `Key sk-…` (default) or `Bearer sk-…`. */
  authScheme?: "Key" | "Bearer";
  /** The fetch to use. Default: `globalThis.fetch`, looked up on each request. */
  fetch?: typeof fetch;
  /** Retry policy for 429, 5xx and network errors; `{ maxRetries: 0 }` turns it off. */
  retry?: RetryOptions;
  /** `User-Agent` header. Default `refvid-client`. */
  userAgent?: string;
}

/** Options every helper accepts. */
export interface RequestOptions {
  /** Aborting it cancels the request and any retry wait; the call rejects with `signal.reason`. */
  signal?: AbortSignal;
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
 * both steps; `timeoutMs` covers the wait only, as the submit has the retry policy's bounds.
 */
export type RunOptions = SubmitOptions & WaitOptions;

/** A refvid API client. Create it with {@link createRefvidClient}. */
export interface RefvidClient {
  /** The raw openapi-fetch client (auth and retries included); returns `{ data, error, response }`, never throws API errors. */
  readonly api: RefvidApi;
  /** Submits a run of model `slug`. Returns the queued run (the terminal run with `sync: true`). */
  submit<S extends ModelSlug>(slug: S, input: ModelInputs[S], options?: SubmitOptions): Promise<Run>;
  /** The run as it stands now. */
  getRun(runId: string, options?: RequestOptions): Promise<Run>;
  /** Cancels a queued or processing run; a run that already ended is a `ConflictError`. */
  cancelRun(runId: string, options?: RequestOptions): Promise<Run>;
  /** Status of the calling key and its organization: wallet, limits, usage. */
  getAccount(options?: RequestOptions): Promise<Account>;
  /** What a run of `slug` with `input` would reserve, without creating it. */
  previewPrice<S extends ModelSlug>(
    slug: S,
    input: ModelInputs[S],
    options?: RequestOptions,
  ): Promise<PricePreview>;
  /** One page of runs matching `request`, newest first. */
  searchRuns(request?: SearchRunsRequest, options?: RequestOptions): Promise<RunPage>;
  /** The organization's webhook signing secret (`whsec_…`), for {@link verifyWebhook}. */
  getWebhookSecret(options?: RequestOptions): Promise<WebhookSecret>;
  /** Polls the run until it is terminal and returns it; see {@link WaitOptions}. */
  waitForRun(runId: string, options?: WaitOptions): Promise<Run>;
  /** Submits a run, then waits for it to end; returns the terminal run whatever its status. */
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

/**
 * Turns an openapi-fetch result into its data, or throws the typed error for the response.
 * Checks `response.ok` rather than `error`, because openapi-fetch leaves `error` undefined for
 * an empty error body.
 */
async function unwrap<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await result;
  if (!response.ok) throw errorFromResponse(response, error);
  if (data === undefined) {
    throw new RefvidError({
      status: response.status,
      type: "empty_response",
      message: `HTTP ${response.status} with an empty body where JSON was expected`,
      requestId: response.headers.get("x-request-id") ?? undefined,
      body: undefined,
    });
  }
  return data;
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
 * Creates a refvid client.
 *
 * @example
 * const refvid = createRefvidClient({ baseUrl: "https://api.example.com", apiKey: process.env.REFVID_KEY! });
 * const run = await refvid.run("lab-a/model-a/reference-to-video", { prompt: "…" }, { timeoutMs: 600_000 });
 */
export function createRefvidClient(options: RefvidClientOptions): RefvidClient {
  if (!options.baseUrl) throw new TypeError("baseUrl is required");
  if (!options.apiKey) throw new TypeError("apiKey is required");

  const customFetch = options.fetch;
  const api = createClient<paths>({
    baseUrl: options.baseUrl,
    // Look the fetch up per request, so that a global fetch replaced after creation is honoured.
    fetch: createRetryingFetch(() => customFetch ?? globalThis.fetch, options.retry),
    headers: {
      Authorization: `${options.authScheme ?? "Key"} ${options.apiKey}`,
      Accept: "application/json",
      "User-Agent": options.userAgent ?? DEFAULT_USER_AGENT,
    },
  });

  const getRun = (runId: string, requestOptions: RequestOptions = {}): Promise<Run> =>
    unwrap(
      api.GET("/v1/runs/{run_id}", { params: { path: { run_id: runId } }, signal: requestOptions.signal }),
    );

  const searchRuns = (
    request: SearchRunsRequest = {},
    requestOptions: RequestOptions = {},
  ): Promise<RunPage> =>
    unwrap(api.POST("/v1/runs/search", { body: request, signal: requestOptions.signal }));

  const searchPage = (request: SearchRunsRequest, signal: AbortSignal | undefined) =>
    searchRuns(request, { signal });

  const submit = <S extends ModelSlug>(
    slug: S,
    input: ModelInputs[S],
    submitOptions: SubmitOptions = {},
  ): Promise<Run> => {
    // One key per submit call, not per attempt: the retrying fetch resends the same request,
    // so every retry carries this key and the server replays instead of creating a second run.
    const key = submitOptions.idempotencyKey === undefined ? randomUUID() : submitOptions.idempotencyKey;
    return unwrap(
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
        signal: submitOptions.signal,
      }),
    );
  };

  const wait = (runId: string, waitOptions: WaitOptions = {}, initial?: Run): Promise<Run> =>
    waitForRun((id, signal) => getRun(id, { signal }), runId, waitOptions, initial);

  return {
    api,
    submit,
    getRun,
    cancelRun: (runId, requestOptions = {}) =>
      unwrap(
        api.POST("/v1/runs/{run_id}/cancel", {
          params: { path: { run_id: runId } },
          signal: requestOptions.signal,
        }),
      ),
    getAccount: (requestOptions = {}) => unwrap(api.GET("/v1/account", { signal: requestOptions.signal })),
    previewPrice: (slug, input, requestOptions = {}) =>
      unwrap(
        api.POST("/v1/pricing/preview", {
          // TypeScript cannot correlate a generic slug with its union member; the signature already did.
          body: { endpoint: slug, input } as PricePreviewRequest,
          signal: requestOptions.signal,
        }),
      ),
    searchRuns,
    getWebhookSecret: (requestOptions = {}) =>
      unwrap(api.GET("/v1/webhooks/secret", { signal: requestOptions.signal })),
    waitForRun: (runId, waitOptions) => wait(runId, waitOptions),
    run: async (slug, input, runOptions = {}) => {
      const submitted = await submit(slug, input, runOptions);
      return wait(submitted.run_id, runOptions, submitted);
    },
    iterateRunPages: (filters, paginationOptions) => iterateRunPages(searchPage, filters, paginationOptions),
    iterateRuns: (filters, paginationOptions) => iterateRuns(searchPage, filters, paginationOptions),
    searchAll: (filters, paginationOptions) => collectRuns(searchPage, filters, paginationOptions),
  };
}
