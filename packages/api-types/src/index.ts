/**
 * Types generated from the refvid OpenAPI document, and the bundled document itself.
 * The document is the single source of truth: see openapi/src.
 */
import { readFileSync } from "node:fs";
import type { components } from "./generated/schema.js";

export type { components, operations, paths, webhooks } from "./generated/schema.js";

/** Absolute path of the bundled OpenAPI 3.1 document (JSON). Works from src/ and dist/ alike. */
export const openapiDocumentPath: string = new URL("../src/generated/openapi.json", import.meta.url).pathname;

/**
 * A fresh, mutable copy of the bundled OpenAPI document. Each call parses the file again, so
 * a consumer that mutates it (as express-openapi-validator does) cannot affect another.
 */
export function loadOpenapiDocument(): Record<string, unknown> & {
  paths: Record<string, unknown>;
  components: Record<string, Record<string, unknown>>;
} {
  return JSON.parse(readFileSync(openapiDocumentPath, "utf8"));
}

type Schemas = components["schemas"];
export type Run = Schemas["Run"];
export type RunStatus = Schemas["RunStatus"];
export type ModelSlug = Schemas["ModelSlug"];
export type Account = Schemas["Account"];
export type PricePreview = Schemas["PricePreview"];
export type PricePreviewRequest = Schemas["PricePreviewRequest"];
export type SearchRunsRequest = Schemas["SearchRunsRequest"];
export type SubmitRunRequest = Schemas["SubmitRunRequest"];
export type RunPage = Schemas["RunPage"];
export type WebhookEvent = Schemas["WebhookEvent"];
export type ModelAInput = Schemas["ModelAInput"];
export type ModelBInput = Schemas["ModelBInput"];
export type ModelCInput = Schemas["ModelCInput"];
export type ModelDInput = Schemas["ModelDInput"];
export type ErrorBody = Schemas["Error"];
export type ValidationErrorBody = Schemas["ValidationError"];
export type InsufficientBalanceErrorBody = Schemas["InsufficientBalanceError"];
export type ConcurrencyLimitErrorBody = Schemas["ConcurrencyLimitError"];
export type RateLimitErrorBody = Schemas["RateLimitError"];

/** Input type of each model, by slug, read from the spec's price preview request (discriminated by `endpoint`). */
export type ModelInputs = {
  [S in ModelSlug]: Extract<PricePreviewRequest, { endpoint: S }>["input"];
};

/** Terminal run statuses: a run in one of these never changes again. */
export const TERMINAL_STATUSES = [
  "succeeded",
  "failed",
  "timeout",
  "cancelled",
] as const satisfies readonly RunStatus[];
