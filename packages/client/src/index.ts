/**
 * @refvid/client: a typed fetch client for the refvid API, with retries, timeouts, waiting,
 * pagination, reference uploads and webhook verification. It imports no Node module: it runs in
 * Node 20+, browsers, Deno, Bun and edge runtimes (anything with fetch and Web Crypto). Reading a
 * file from a path for an upload is Node's business: `fileFromPath` from `@refvid/client/node`.
 */

export type {
  Account,
  AnyModelSlug,
  Billing,
  DeletedFile,
  FileUpload,
  Model,
  ModelAInput,
  ModelBInput,
  ModelCInput,
  ModelDInput,
  ModelInputs,
  ModelList,
  ModelSlug,
  PricePreview,
  PricePreviewRequest,
  Run,
  RunError,
  RunOutput,
  RunPage,
  RunStatus,
  SearchRunsRequest,
  SubmitRunRequest,
  Video,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookDeliveryPage,
  WebhookEvent,
  WebhookSecret,
} from "@refvid/api-types";
export { TERMINAL_STATUSES } from "@refvid/api-types";
export { ApiPromise, type WithResponse } from "./api-promise.js";
export {
  type AnyModelInput,
  type CatalogModelSlug,
  createRefvidClient,
  type RefvidApi,
  type RefvidClient,
  type RefvidClientOptions,
  type RequestOptions,
  type RunOptions,
  type SubmitOptions,
  type UploadBody,
  type UploadOptions,
} from "./client.js";
export {
  COMMAND_OPTIONS,
  commandNameOf,
  hasFlag,
  inputFlagNames,
  kebabCase,
  modelsNamed,
} from "./command-line.js";
export {
  AuthenticationError,
  ConcurrencyLimitError,
  ConflictError,
  errorFromResponse,
  type FieldProblem,
  InsufficientBalanceError,
  NotFoundError,
  RateLimitError,
  RefvidError,
  RequestTimeoutError,
  RunFailedError,
  RunTimeoutError,
  ValidationError,
} from "./errors.js";
export {
  fieldOfProblem,
  type InputProperty,
  type InputSchema,
  inputPropertiesOf,
  inputSchemaOf,
  isUrlSchema,
  type PropertySchema,
  plainProperty,
  propertyTypeOf,
  type SchemaProblem,
  schemaProblem,
} from "./model-schema.js";
export type { PaginationOptions, RunFilters } from "./pagination.js";
export { DEFAULT_RETRY_OPTIONS, type RetryEvent, type RetryOptions } from "./retry.js";
export { parseRetryAfter } from "./retry-after.js";
export type { StreamOptions } from "./stream.js";
export { isTerminal, type WaitOptions } from "./wait.js";
export {
  type SignWebhookOptions,
  signWebhook,
  type VerifyWebhookOptions,
  verifyWebhook,
  type WebhookRequestHeaders,
  type WebhookSignatureHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from "./webhooks.js";
