/**
 * Pieces of fal's queue protocol: where a request known only by its id is followed, which result
 * answers are the model's own errors, and the message such an error carries
 * (fal.ai/docs/documentation/model-apis/request-errors, docs.fal.ai/errors).
 */
import { VendorError, type VendorResponse, vendorMessage, vendorUrl } from "./upstream/vendor-http.js";

/** Where fal's video models put their video, unless a route says otherwise. */
export type FalOutput = { video?: { url?: unknown } };

/** Namespaces whose app id has three parts (`workflows/owner/app`); otherwise `owner/app`. */
const NAMESPACES = new Set(["workflows", "comfy"]);

/** The URLs a fal request is followed by, as fal names them in its submit answer. */
const URL_NAMES = ["status_url", "response_url", "cancel_url"] as const;
export type FalUrls = Record<(typeof URL_NAMES)[number], string>;

/** status_url, response_url and cancel_url as fal gave them, on fal's own origin (`baseUrl`'s). */
export function falUrls(
  baseUrl: string,
  provider: string,
  id: string,
  given: Record<string, unknown>,
): FalUrls {
  const urls = {} as FalUrls;
  for (const name of URL_NAMES) {
    const value = given[name];
    if (typeof value !== "string" || value === "") {
      throw new VendorError(`${provider} request ${id} has no ${name}`, null, false);
    }
    urls[name] = vendorUrl(baseUrl, value).toString();
  }
  return urls;
}

/** A request's status, result and cancel paths, under its endpoint's app id (the sub-path dropped). */
export function requestPaths(endpoint: string, id: string) {
  const parts = endpoint.split("/");
  const app = parts.slice(0, NAMESPACES.has(parts[0] ?? "") ? 3 : 2).join("/");
  const base = `${app}/requests/${encodeURIComponent(id)}`;
  return { status_url: `${base}/status`, response_url: base, cancel_url: `${base}/cancel` };
}

/**
 * Result answers read here rather than retried: the model's errors (4xx, and 5xx in fal's model
 * error shape). 401/403/404 stay errors of the call; 429 and gateway 5xx are retried.
 */
export const RESULT_ANSWERS: readonly number[] = Array.from({ length: 200 }, (_, i) => 400 + i).filter(
  (status) => ![401, 403, 404, 429].includes(status),
);

/** fal's model errors: any 4xx, or a 5xx that says it is the model's (typed, not retryable). */
export function isModelError(answer: VendorResponse): boolean {
  if (answer.status < 500) return true;
  const body = answer.body as { detail?: unknown; error_type?: unknown } | null;
  return (
    answer.headers.get("x-fal-retryable") === "false" ||
    answer.headers.has("x-fal-error-type") ||
    Array.isArray(body?.detail) ||
    typeof body?.error_type === "string"
  );
}

/**
 * fal's message: `detail` as a string, or every `{loc, msg}` as `field: msg` (the `body` prefix
 * dropped). A 422 naming fields is the model refusing the input, and says so.
 */
export function falMessage(body: unknown, status?: number): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  const entries = Array.isArray(detail) ? (detail as { loc?: unknown; msg?: unknown }[]) : [];
  const said = entries.flatMap((entry) => {
    const { loc, msg } = entry ?? {};
    if (typeof msg !== "string") return [];
    const field = Array.isArray(loc) ? loc.filter((part, i) => !(i === 0 && part === "body")).join(".") : "";
    return [{ field, msg }];
  });
  if (said.length === 0) return vendorMessage(body);
  const text = said.map(({ field, msg }) => (field ? `${field}: ${msg}` : msg)).join("; ");
  const refused = status === 422 && said.some(({ field }) => field !== "");
  return (refused ? `The model refused the input: ${text}` : text).slice(0, 500);
}
