/**
 * The held sync PUT of a Cog prediction: opening it (cog-held-request.ts carries it), waiting on
 * it, and what its answer says: the ended prediction, a lost answer, a refused input or a failure.
 */
import { type HeldAnswer, putAndHold } from "./cog-held-request.js";
import { ProviderError } from "./types.js";
import { redactSecret, VendorError, vendorMessage } from "./upstream/vendor-http.js";

/** What Cog answers about a prediction (coglet and Cog ≤ 0.16 share these fields). */
export interface CogPrediction {
  id?: unknown;
  status?: unknown;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
}

const ENDED: readonly unknown[] = ["succeeded", "failed", "canceled"];
/** A gateway's answers when it gave up on Cog (Cog sends neither): Cog may hold the prediction. */
const GATEWAY_GAVE_UP: readonly number[] = [502, 504];

/** A held request and the way to drop it. */
export interface OpenRequest {
  answer: Promise<HeldAnswer>;
  drop(): void;
}

export function openRequest(url: URL, payload: string, headers: Record<string, string>): OpenRequest {
  const controller = new AbortController();
  const answer = putAndHold(url, payload, headers, controller.signal);
  answer.catch(() => {});
  return { answer, drop: () => controller.abort() };
}

/** `promise`'s outcome, or `signal`'s reason as soon as it aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The ended prediction (succeeded, failed or canceled) the answer carries, if it does. */
export function endedPrediction(answer: HeldAnswer | null): CogPrediction | null {
  const body = (answer?.body ?? null) as CogPrediction | null;
  return answer?.status === 200 && ENDED.includes(body?.status) ? (body as CogPrediction) : null;
}

/**
 * Whether the answer was lost: a gateway gave up on Cog, or the connection dropped once the
 * request had gone out (`sent`). Cog may then hold the request's prediction.
 */
export function answerLost(answer: HeldAnswer | null, sent: boolean): boolean {
  return answer ? GATEWAY_GAVE_UP.includes(answer.status) : sent;
}

/** Cog's 422: the model refused the input. */
export function refusal(body: unknown, token: string | null): ProviderError {
  return new ProviderError(redactSecret(`The model refused the input: ${refusalText(body)}`, token));
}

/** Why the held PUT got no prediction: retryable when Cog was busy, failing or unreachable. */
export function heldFailure(name: string, url: URL, answer: HeldAnswer | null): VendorError {
  if (!answer) return new VendorError(`${name}: connection lost (PUT ${url.pathname})`, null, true);
  return new VendorError(
    `${name} answered ${answer.status} to PUT ${url.pathname}: ${vendorMessage(answer.body ?? null)}`,
    answer.status,
    answer.status === 409 || answer.status === 429 || answer.status >= 500,
  );
}

/** The answer's Retry-After header, if any. */
export function retryAfterOf(answer: HeldAnswer | null): string | null {
  const value = answer?.headers["retry-after"];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

/**
 * Cog's refusal of an input in its words: pydantic's `detail` (coglet's too,
 * crates/coglet/src/input_validation.rs), every entry as `field: msg` with the `body.input` prefix
 * dropped; any other body as the vendor said it.
 */
function refusalText(body: unknown): string {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (!Array.isArray(detail)) return vendorMessage(body);
  const lines = detail.map((entry) => {
    const { loc, msg } = (entry ?? {}) as { loc?: unknown; msg?: unknown };
    const path = Array.isArray(loc) ? loc.map(String) : [];
    const skip = path[0] === "body" ? (path[1] === "input" ? 2 : 1) : 0;
    const field = path.slice(skip).join(".");
    return field ? `${field}: ${String(msg)}` : String(msg);
  });
  return lines.length > 0 ? lines.join("; ").slice(0, 500) : vendorMessage(body);
}
