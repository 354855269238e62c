/**
 * Types generated from the refvid OpenAPI document, with a name for each schema a client works
 * with. The document is the single source of truth: see openapi/src. This entry imports nothing
 * at run time, so it works in browsers and edge runtimes; the document itself (read from disk)
 * is the Node-only `@refvid/api-types/document`.
 */
import type { components } from "./generated/schema.js";

export type { components, operations, paths, webhooks } from "./generated/schema.js";

type Schemas = components["schemas"];
/** One schema of the document by name. An interface can extend this, not `Schemas[K]` itself. */
type Schema<K extends keyof Schemas> = Schemas[K];

// Object schemas are interfaces that extend the generated type, so that editors and errors show
// `Run` rather than `components["schemas"]["Run"]` or the whole structure. Nested schemas are
// narrowed to their named interfaces where a client reads them, which the generated type allows.

/** One generated video. */
export interface Video extends Schema<"Video"> {}
/** The result of a succeeded run. */
export interface RunOutput extends Schema<"RunOutput"> {
  videos: Video[];
}
/** Why a run did not succeed. */
export interface RunError extends Schema<"RunError"> {}
/** What a terminal run was charged. */
export interface Billing extends Schema<"Billing"> {}
/** One generation: its status, and its output, error and charge once it has ended. */
export interface Run extends Schema<"Run"> {
  output: RunOutput | null;
  error: RunError | null;
  billing: Billing | null;
}
/** One page of search results, newest first. */
export interface RunPage extends Schema<"RunPage"> {
  data: Run[];
}
/** The body of a `run.*` webhook. */
export interface WebhookEvent extends Schema<"WebhookEvent"> {
  data: Run;
}
/** Status of the calling key and its organization: wallet, limits, usage. */
export interface Account extends Schema<"Account"> {}
/** What a run with a given input would reserve at admission. */
export interface PricePreview extends Schema<"PricePreview"> {}
/** Body of `POST /v1/runs/search`. */
export interface SearchRunsRequest extends Schema<"SearchRunsRequest"> {}
/** Body of the generic submit, `POST /v1/run/{lab}/{model}/{category}`. */
export interface SubmitRunRequest extends Schema<"SubmitRunRequest"> {}
/** A model the server serves: its input schema, limits and price table (`GET /v1/models`). */
export interface Model extends Schema<"Model"> {}
/** Every model the server serves. */
export interface ModelList extends Schema<"ModelList"> {
  data: Model[];
}
/** One webhook event of a run and every attempt to deliver it (`GET /v1/webhooks/deliveries`). */
export interface WebhookDelivery extends Schema<"WebhookDelivery"> {
  attempts: WebhookDeliveryAttempt[];
}
/** One attempt to deliver a webhook: when, the receiver's status or the error, how long. */
export interface WebhookDeliveryAttempt extends Schema<"WebhookDeliveryAttempt"> {}
/** One page of the webhook delivery log, newest first. */
export interface WebhookDeliveryPage extends Schema<"WebhookDeliveryPage"> {
  data: WebhookDelivery[];
}
/** A reference file uploaded with `POST /v1/files`; its `url` goes in any `*_urls` field. */
export interface FileUpload extends Schema<"FileUpload"> {}
/** Answer of `DELETE /v1/files/{file_id}`. */
export interface DeletedFile extends Schema<"DeletedFile"> {}
/** The webhook signing secret of the calling key's environment. */
export interface WebhookSecret extends Schema<"WebhookSecret"> {}
/** Input of `lab-a/model-a/reference-to-video`. */
export interface ModelAInput extends Schema<"ModelAInput"> {}
/** Input of `lab-b/model-b/reference-to-video`. */
export interface ModelBInput extends Schema<"ModelBInput"> {}
/** Input of `lab-c/model-c/reference-to-video`. */
export interface ModelCInput extends Schema<"ModelCInput"> {}
/** Input of `lab-d/model-d/reference-to-video`. */
export interface ModelDInput extends Schema<"ModelDInput"> {}
/** Body of most error responses. */
export interface ErrorBody extends Schema<"Error"> {}
/** Body of `400 invalid_request`. */
export interface ValidationErrorBody extends Schema<"ValidationError"> {}
/** Body of `400 insufficient_balance`. */
export interface InsufficientBalanceErrorBody extends Schema<"InsufficientBalanceError"> {}
/** Body of `429 concurrency_limit_exceeded`. */
export interface ConcurrencyLimitErrorBody extends Schema<"ConcurrencyLimitError"> {}
/** Body of `429 rate_limit_exceeded`. */
export interface RateLimitErrorBody extends Schema<"RateLimitError"> {}

/** A run's status. `queued` and `processing` are in flight; the others are terminal. */
export type RunStatus = Schemas["RunStatus"];
/** Any model's slug, `<lab>/<model>/<category>`: a built-in model's or one the operator's catalog adds. */
export type AnyModelSlug = Schemas["ModelSlug"];
/** A slug of one of the four built-in models, whose inputs are typed (`ModelInputs`). */
export type ModelSlug = keyof ModelInputs;
/** Body of `POST /v1/pricing/preview`: a model slug and that model's input. */
export type PricePreviewRequest = Schemas["PricePreviewRequest"];

/**
 * Input type of each model, by slug. index.test.ts checks that it names exactly the spec's models,
 * each with the input the spec gives it.
 */
export interface ModelInputs {
  "lab-a/model-a/reference-to-video": ModelAInput;
  "lab-b/model-b/reference-to-video": ModelBInput;
  "lab-c/model-c/reference-to-video": ModelCInput;
  "lab-d/model-d/reference-to-video": ModelDInput;
}

/** Terminal run statuses: a run in one of these never changes again. */
export const TERMINAL_STATUSES = [
  "succeeded",
  "failed",
  "timeout",
  "cancelled",
] as const satisfies readonly RunStatus[];
