/** The client's public shape: its options and the {@link RefvidClient} interface. */
import type {
  Account,
  AnyModelSlug,
  components,
  DeletedFile,
  FileUpload,
  Model,
  ModelInputs,
  ModelList,
  ModelSlug,
  PricePreview,
  paths,
  Run,
  RunPage,
  SearchRunsRequest,
  SubmitRunRequest,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookSecret,
} from "@refvid/api-types";
import type { Client } from "openapi-fetch";
import type { ApiPromise } from "./api-promise.js";
import { RequestTimeoutError, RunFailedError } from "./errors.js";
import type { PaginationOptions, RunFilters } from "./pagination.js";
import type { RetryOptions } from "./retry.js";
import type { StreamOptions } from "./stream.js";
import type { WaitOptions } from "./wait.js";

/**
 * A model's input as the generic submit and the price preview take it: a JSON object, as the
 * model's `input_schema` (`GET /v1/models/{slug}`) describes it. The server checks it.
 */
export type AnyModelInput = SubmitRunRequest["input"];

/**
 * `S`, unless it is a built-in model's slug: those take their typed input ({@link ModelInputs}),
 * so that a wrong built-in input stays a type error rather than passing as a plain object.
 */
export type CatalogModelSlug<S extends AnyModelSlug> = S extends ModelSlug ? never : S;

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
  /** The events `webhookUrl` gets: `started` and `progress` besides `completed` (the default). */
  webhookEvents?: components["schemas"]["WebhookEvents"];
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

/** What {@link RefvidClient.uploadFile} sends: a Blob or File, or bytes already in memory. */
export type UploadBody = Blob | ArrayBuffer | ArrayBufferView;

/** Options for {@link RefvidClient.uploadFile}. */
export interface UploadOptions extends RequestOptions {
  /** The name to store with the file. Default: a `File`'s own `name`; none for other bodies. */
  fileName?: string;
  /**
   * The media type to declare. Default: the Blob's `type`, or `application/octet-stream`. The
   * server goes by the file's bytes whatever is declared; this only has to be a valid header value.
   */
  contentType?: string;
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
  /**
   * Submits a run of model `slug` (`POST /v1/run/{slug}`). Returns the queued run (the terminal run
   * with `sync: true`). A built-in model's input is typed by its slug; any other model the server
   * lists (one the operator's catalog adds) takes a plain object, checked by the server against
   * the model's `input_schema`.
   */
  submit<S extends ModelSlug>(slug: S, input: ModelInputs[S], options?: SubmitOptions): ApiPromise<Run>;
  submit<S extends AnyModelSlug>(
    slug: CatalogModelSlug<S>,
    input: AnyModelInput,
    options?: SubmitOptions,
  ): ApiPromise<Run>;
  /** The run as it stands now. */
  getRun(runId: string, options?: RequestOptions): ApiPromise<Run>;
  /** Cancels a queued or processing run; a run that already ended is a `ConflictError`. */
  cancelRun(runId: string, options?: RequestOptions): ApiPromise<Run>;
  /** Status of the calling key and its organization: wallet, limits, usage. */
  getAccount(options?: RequestOptions): ApiPromise<Account>;
  /** What a run of `slug` with `input` would reserve, without creating it; inputs typed as for `submit`. */
  previewPrice<S extends ModelSlug>(
    slug: S,
    input: ModelInputs[S],
    options?: RequestOptions,
  ): ApiPromise<PricePreview>;
  previewPrice<S extends AnyModelSlug>(
    slug: CatalogModelSlug<S>,
    input: AnyModelInput,
    options?: RequestOptions,
  ): ApiPromise<PricePreview>;
  /** One page of runs matching `request`, newest first. */
  searchRuns(request?: SearchRunsRequest, options?: RequestOptions): ApiPromise<RunPage>;
  /** Every model the server serves, with its input schema, limits and price table. */
  listModels(options?: RequestOptions): ApiPromise<ModelList>;
  /** One model by slug, `<lab>/<model>/<category>`; an unknown slug is a `NotFoundError`. */
  getModel(slug: string, options?: RequestOptions): ApiPromise<Model>;
  /**
   * Uploads a reference file (an image, video or audio file) for your organization and returns
   * it with the `url` to put in any `*_urls` field of a run, until it expires (24 h by default).
   * The bytes are sent as the raw body, streamed: a `Blob` or `File` (a browser's file input, or
   * `fileFromPath` from `@refvid/client/node`) is never read into memory. An upload is not
   * retried (it carries no idempotency key) and does not follow redirects. A file too large for
   * its kind rejects with a `RefvidError` of status 413 (`payload_too_large`), one that is not
   * an image, video or audio file refvid reads with 415 (`unsupported_media_type`).
   */
  uploadFile(file: UploadBody, options?: UploadOptions): ApiPromise<FileUpload>;
  /** Deletes an upload before it expires; someone else's, or one already gone, is a `NotFoundError`. */
  deleteUpload(fileId: string, options?: RequestOptions): ApiPromise<DeletedFile>;
  /**
   * The webhook signing secret (`whsec_…`) of this key's environment, for {@link verifyWebhook}: it
   * verifies the webhooks of that environment's runs only (live and test keys each have their own).
   */
  getWebhookSecret(options?: RequestOptions): ApiPromise<WebhookSecret>;
  /**
   * A new signing secret for this key's environment; the other environment's is left as it is. The
   * previous one keeps signing beside it for 24 h (a second `v1,` signature), so receivers can
   * switch without missing a delivery.
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
   * Inputs are typed as for `submit`.
   */
  run<S extends ModelSlug>(slug: S, input: ModelInputs[S], options?: RunOptions): Promise<Run>;
  run<S extends AnyModelSlug>(
    slug: CatalogModelSlug<S>,
    input: AnyModelInput,
    options?: RunOptions,
  ): Promise<Run>;
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
