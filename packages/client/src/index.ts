/**
 * @refvid/client: a typed fetch client for the refvid API, with retries, waiting, pagination
 * and webhook verification.
 */

export type {
  Account,
  ModelInputs,
  ModelSlug,
  PricePreview,
  PricePreviewRequest,
  Run,
  RunPage,
  RunStatus,
  SearchRunsRequest,
  WebhookEvent,
} from "@refvid/api-types";
export { TERMINAL_STATUSES } from "@refvid/api-types";
export {
  createRefvidClient,
  type RefvidApi,
  type RefvidClient,
  type RefvidClientOptions,
  type RequestOptions,
  type RunOptions,
  type SubmitOptions,
  type WebhookSecret,
} from "./client.js";
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
  RunTimeoutError,
  ValidationError,
} from "./errors.js";
export type { PaginationOptions, RunFilters } from "./pagination.js";
export { DEFAULT_RETRY_OPTIONS, parseRetryAfter, type RetryOptions } from "./retry.js";
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
