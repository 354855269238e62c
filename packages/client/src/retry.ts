/**
 * Retries at the fetch layer, so the raw openapi-fetch client and every helper share one policy:
 * 429 and 500/502/503/504 responses and network errors are retried with exponential backoff and
 * full jitter, never sooner than the server's `Retry-After`.
 */

/** How hard to retry. */
export interface RetryOptions {
  /** Retries after the first attempt; `0` turns retrying off. Default 3. */
  maxRetries?: number;
  /** Cap of the first retry's delay; each later retry doubles it. Default 500 ms. */
  baseDelayMs?: number;
  /** Largest backoff cap. A longer `Retry-After` still wins: it is a floor. Default 30 s. */
  maxDelayMs?: number;
}

/** The defaults used for options left out of {@link RetryOptions}. */
export const DEFAULT_RETRY_OPTIONS: Readonly<Required<RetryOptions>> = Object.freeze({
  maxRetries: 3,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
});

/** Statuses worth repeating: the server is overloaded, limiting us, or failed transiently. */
const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Methods that HTTP defines as idempotent: repeating them cannot do anything twice. */
const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/**
 * POSTs that are safe to repeat although POST is not idempotent in general: cancelling twice
 * leaves the run cancelled (the second is a 409), and search and price preview change nothing.
 * Anchored at the end so that a `baseUrl` with a path prefix still matches.
 */
const SAFE_POST_PATHS: readonly RegExp[] = [
  /\/v1\/runs\/[^/]+\/cancel$/,
  /\/v1\/runs\/search$/,
  /\/v1\/pricing\/preview$/,
];

/**
 * Parses a `Retry-After` value, either delta-seconds or an HTTP-date, into milliseconds from
 * `nowMs`. Returns `undefined` when absent or unparseable; a date in the past gives 0.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Every HTTP-date form starts with a day name; without this check Date.parse reads "-1" as a year.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * Delay before retry number `attempt` (0 for the first retry): "full jitter", a uniform draw
 * in [0, min(maxDelayMs, baseDelayMs * 2^attempt)), so that many clients throttled at once
 * spread out instead of retrying in lockstep. `retryAfterMs` is a floor, since retrying before
 * the server said to is certain to fail again.
 */
export function backoffDelayMs(
  attempt: number,
  options: Readonly<Required<RetryOptions>>,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** attempt);
  const jittered = Math.floor(random() * cap);
  return Math.max(jittered, retryAfterMs ?? 0);
}

/**
 * Resolves after `ms`, or rejects with `signal.reason` (an `AbortError` for a plain `abort()`)
 * as soon as the signal aborts, the same way `fetch` rejects, so callers handle one shape.
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Whether repeating `request` is safe. A submit (or any other POST) is retried only when it
 * carries an `Idempotency-Key`, because the server then replays the first response instead of
 * creating a second run; without one, a retry after a lost response could bill twice.
 */
export function isRetryableRequest(request: Request): boolean {
  if (IDEMPOTENT_METHODS.has(request.method)) return true;
  if (request.headers.has("idempotency-key")) return true;
  if (request.method !== "POST") return false;
  const path = new URL(request.url).pathname;
  return SAFE_POST_PATHS.some((re) => re.test(path));
}

/**
 * Whether `response` to a retryable request should be retried. Besides 429 and 5xx, a 409 to a
 * request with an `Idempotency-Key` means `idempotency_key_in_use`: an earlier attempt (whose
 * response we lost) is still being handled, and retrying later returns its result.
 */
function isRetryableResponse(request: Request, response: Response): boolean {
  if (RETRYABLE_STATUSES.has(response.status)) return true;
  return response.status === 409 && request.headers.has("idempotency-key");
}

/**
 * Wraps a fetch so that it retries per {@link RetryOptions}. Each attempt sends a clone of the
 * request, so the body and headers (the same `Idempotency-Key` included) are identical every
 * time. When retries run out, the last response is returned (or the last network error thrown)
 * for the caller to report. An aborted `request.signal` ends everything at once, sleeps included.
 */
export function createRetryingFetch(
  getFetch: () => (request: Request) => Promise<Response>,
  retry: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const options: Required<RetryOptions> = {
    maxRetries: retry.maxRetries ?? DEFAULT_RETRY_OPTIONS.maxRetries,
    baseDelayMs: retry.baseDelayMs ?? DEFAULT_RETRY_OPTIONS.baseDelayMs,
    maxDelayMs: retry.maxDelayMs ?? DEFAULT_RETRY_OPTIONS.maxDelayMs,
  };

  return async function retryingFetch(request: Request): Promise<Response> {
    const retryable = options.maxRetries > 0 && isRetryableRequest(request);
    for (let attempt = 0; ; attempt++) {
      const mayRetry = retryable && attempt < options.maxRetries;
      let response: Response;
      try {
        // Keep the original unread while a retry may still need its body.
        response = await getFetch()(mayRetry ? request.clone() : request);
      } catch (error) {
        if (!mayRetry || request.signal.aborted) throw error;
        await sleep(backoffDelayMs(attempt, options), request.signal);
        continue;
      }
      if (!mayRetry || !isRetryableResponse(request, response)) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      // Discard the body so that the keep-alive connection is freed for the next attempt.
      await response.body?.cancel().catch(() => undefined);
      await sleep(backoffDelayMs(attempt, options, retryAfterMs), request.signal);
    }
  };
}
