/**
 * Retries and timeouts at the fetch layer, so the raw openapi-fetch client and every helper share
 * one policy: 429 and 500/502/503/504 responses, network errors and timed-out attempts are retried
 * with exponential backoff and full jitter, never sooner than the server's `Retry-After`, and not
 * at all when `Retry-After` asks for longer than the client is willing to wait.
 */
import { RequestTimeoutError } from "./errors.js";
import { parseRetryAfter } from "./retry-after.js";

/** What caused a retry, as reported to {@link RetryOptions.onRetry}. */
export interface RetryEvent {
  /** The retry about to be sent: 1 for the first retry (the second attempt). */
  attempt: number;
  /** How long the client waits before sending it. */
  delayMs: number;
  /** The retryable status that caused it, or `undefined` when no response arrived. */
  status: number | undefined;
  /** The network error or {@link RequestTimeoutError} that caused it, or `undefined` for a status. */
  error: unknown;
  /** The request being retried (the same method, URL, headers and body every time). */
  request: Request;
}

/** How hard to retry. */
export interface RetryOptions {
  /** Retries after the first attempt; `0` turns retrying off. Default 3. */
  maxRetries?: number;
  /** Cap of the first retry's backoff; each later retry doubles it. Default 500 ms. */
  baseDelayMs?: number;
  /**
   * The longest wait before one retry. It caps the backoff; and when a `Retry-After` asks for
   * longer, the client does not wait at all: the call fails at once with the response's typed
   * error (e.g. a `RateLimitError` whose `retryAfterSeconds` says when to come back).
   * Default 20 000 ms.
   */
  maxRetryDelayMs?: number;
  /** Called before each retry (before the wait), e.g. to log it. An exception thrown here ends the call. */
  onRetry?: (event: RetryEvent) => void;
}

/** The defaults used for options left out of {@link RetryOptions}. */
export const DEFAULT_RETRY_OPTIONS: Readonly<Required<Omit<RetryOptions, "onRetry">>> = Object.freeze({
  maxRetries: 3,
  baseDelayMs: 500,
  maxRetryDelayMs: 20_000,
});

type RetryPolicy = Readonly<Required<Omit<RetryOptions, "onRetry">>> & Pick<RetryOptions, "onRetry">;

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
 * Delay before retry number `attempt` (0 for the first retry): "full jitter", a uniform draw
 * in [0, min(maxRetryDelayMs, baseDelayMs * 2^attempt)), so that many clients throttled at once
 * spread out instead of retrying in lockstep. `retryAfterMs` is a floor, since retrying before
 * the server said to is certain to fail again (callers do not retry when it exceeds the maximum).
 */
export function backoffDelayMs(
  attempt: number,
  options: Pick<RetryPolicy, "baseDelayMs" | "maxRetryDelayMs">,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const cap = Math.min(options.maxRetryDelayMs, options.baseDelayMs * 2 ** attempt);
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

const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Each attempt's request, kept as long as its response. undici (Node's fetch) links a Request to
 * the signal it was made with only weakly, so a Request nobody holds can be garbage collected
 * with its link, and an abort (our timeout) would then never reach a pending fetch or body read.
 */
const sentRequests = new WeakMap<Response, Request>();

/**
 * `request` with a signal that aborts when `callerSignal` does (with its reason) or at `deadline`.
 * Not `AbortSignal.any`, whose result Node 20 may garbage collect while a fetch depends on it: here
 * the deadline (which Node keeps until it fires) holds the controller through its listener.
 */
function withDeadline(request: Request, callerSignal: AbortSignal, deadline: AbortSignal): Request {
  const controller = new AbortController();
  for (const signal of [callerSignal, deadline]) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return new Request(request, { signal: controller.signal });
}

/** Per-call settings of the retrying fetch. */
export interface AttemptOptions {
  /** How long each attempt may take, body included; `undefined` or `0` for no limit. */
  timeoutMs?: number | undefined;
}

/**
 * Wraps a fetch so that it retries per {@link RetryOptions} and bounds each attempt by
 * `timeoutMs`. Each attempt sends a copy of the request, so the body and headers (the same
 * `Idempotency-Key` included) are identical every time. When retries run out, the last response
 * is returned (or the last network error or {@link RequestTimeoutError} thrown) for the caller
 * to report. An aborted `request.signal` ends everything at once, waits included, with its reason.
 *
 * An attempt's timeout keeps running while the caller reads the body, which it then aborts with
 * a `TimeoutError` `DOMException`; the helpers turn that into a {@link RequestTimeoutError} too.
 */
export function createRetryingFetch(
  getFetch: () => (request: Request) => Promise<Response>,
  retry: RetryOptions = {},
): (request: Request, attemptOptions?: AttemptOptions) => Promise<Response> {
  const policy: RetryPolicy = {
    maxRetries: retry.maxRetries ?? DEFAULT_RETRY_OPTIONS.maxRetries,
    baseDelayMs: retry.baseDelayMs ?? DEFAULT_RETRY_OPTIONS.baseDelayMs,
    maxRetryDelayMs: retry.maxRetryDelayMs ?? DEFAULT_RETRY_OPTIONS.maxRetryDelayMs,
    onRetry: retry.onRetry,
  };

  return async function retryingFetch(request, { timeoutMs } = {}) {
    const retryable = policy.maxRetries > 0 && isRetryableRequest(request);
    // Timers cannot go beyond 2^31 - 1 ms (Node would fire at once instead); beyond is no limit.
    const limit = timeoutMs !== undefined && timeoutMs > 0 && timeoutMs <= MAX_TIMER_MS ? timeoutMs : 0;
    for (let attempt = 0; ; attempt++) {
      const mayRetry = retryable && attempt < policy.maxRetries;
      // Keep the original unread while a retry may still need its body. Only then: a clone tees
      // the body, and the branch kept buffers every byte sent (all of an upload, which is never
      // retried, so is sent as it is).
      const copy = mayRetry ? request.clone() : request;
      const deadline = limit ? AbortSignal.timeout(limit) : undefined;
      const sent = deadline ? withDeadline(copy, request.signal, deadline) : copy;
      let response: Response;
      try {
        response = await getFetch()(sent);
      } catch (error) {
        // The caller's abort wins: they asked to stop, so they get their reason.
        if (request.signal.aborted) throw error;
        const failure = deadline?.aborted ? new RequestTimeoutError(limit) : error;
        if (!mayRetry) throw failure;
        const delayMs = backoffDelayMs(attempt, policy);
        policy.onRetry?.({ attempt: attempt + 1, delayMs, status: undefined, error: failure, request });
        await sleep(delayMs, request.signal);
        continue;
      }
      // Referencing `sent` here also keeps it alive while the fetch above is pending.
      sentRequests.set(response, sent);
      if (!mayRetry || !RETRYABLE_STATUSES.has(response.status)) return response;
      const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"));
      // The server wants a longer pause than we may take: report it now rather than sleep.
      if (retryAfterMs !== undefined && retryAfterMs > policy.maxRetryDelayMs) return response;
      // Discard the body so that the keep-alive connection is freed for the next attempt.
      await response.body?.cancel().catch(() => undefined);
      const delayMs = backoffDelayMs(attempt, policy, retryAfterMs);
      policy.onRetry?.({ attempt: attempt + 1, delayMs, status: response.status, error: undefined, request });
      await sleep(delayMs, request.signal);
    }
  };
}
