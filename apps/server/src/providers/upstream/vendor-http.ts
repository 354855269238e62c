/**
 * Calls to a model vendor's API (fal, Replicate, a Cog container). The vendor's URL is the
 * operator's configuration, so it is trusted like a database address; URLs the vendor hands back
 * are followed only on the same origin. A 429, a 5xx, a timeout or a dropped connection is retried
 * with exponential backoff and full jitter, honouring `Retry-After`, until the run's deadline;
 * any other answer is the vendor's word. The credential never appears in an error or a log.
 */
import { RunFailure } from "@refvid/core";
import { type Scheduler, sleep } from "../../clock.js";

export interface VendorCall {
  /** The provider's name, for messages. */
  provider: string;
  /** The configured base URL; followed URLs must share its origin. */
  baseUrl: string;
  /** Authorization header value, or null when the vendor needs none. */
  authorization: string | null;
  scheduler: Scheduler;
  /** Milliseconds since the epoch, from the service's clock. */
  now: () => number;
  signal: AbortSignal;
  /** No retry waits past this (ms since the epoch). */
  deadline: number;
  /** One attempt's time limit. */
  attemptTimeoutMs?: number;
  /** First backoff step; doubles per retry up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** For tests: the jitter factor in [0, 1); random by default. */
  random?: () => number;
}

export interface VendorRequest {
  method: "GET" | "POST" | "PUT";
  /** An absolute URL on the vendor's origin, or a path joined to the base URL. */
  url: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Statuses that are answers, not failures (e.g. 409 for Cog, 404 for a cancel). */
  accept?: readonly number[];
  /** Do not retry this call. */
  once?: boolean;
  /**
   * A create call, which the vendor cannot de-duplicate: it is sent again only when it cannot have
   * reached the vendor (429, a refused connection). After any other failure it throws
   * `UnansweredCreate`, and the adapter looks for the job before it creates one more.
   */
  creates?: boolean;
}

export interface VendorResponse {
  status: number;
  headers: Headers;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: unknown;
}

/**
 * The vendor answered with an error, or could not be reached in time. A run it ends fails as
 * `provider_error`, uncharged; if the vendor never accepted the job, the worker tries the next route.
 */
export class VendorError extends RunFailure {
  constructor(
    message: string,
    /** The HTTP status, or null when no answer came. */
    readonly status: number | null,
    /** Whether trying again later (or elsewhere) may succeed: 429, 5xx, timeouts, lost connections. */
    readonly retryable: boolean,
  ) {
    super("provider_error", message);
  }
}

/**
 * A create that may have reached the vendor got no usable answer (no answer in time, the
 * connection lost after the request went out, a 5xx): the job may exist and be billed.
 */
export class UnansweredCreate extends VendorError {}

const RETRYABLE = (status: number) => status === 429 || status >= 500;

/** Connection errors that mean the request never left this machine (nothing reached the vendor). */
const NEVER_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH"]);

function neverSent(err: unknown): boolean {
  const code = (err as { cause?: { code?: unknown } } | null)?.cause?.code;
  return typeof code === "string" && NEVER_SENT.has(code);
}

/** Resolves a vendor URL: relative paths join the base; absolute ones must share its origin. */
export function vendorUrl(baseUrl: string, url: string): URL {
  const base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  const resolved = new URL(url.replace(/^\//, ""), base);
  if (resolved.origin !== base.origin) {
    throw new VendorError(
      `the vendor pointed to ${resolved.origin}, not its own ${base.origin}`,
      null,
      false,
    );
  }
  return resolved;
}

/** Seconds or an HTTP date in `Retry-After`, as milliseconds; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** `message` without the credential, even where a vendor echoed it back. */
export function redactSecret(message: string, secret: string | null): string {
  return secret ? message.split(secret).join("[redacted]") : message;
}

/** What a vendor said went wrong, in a sentence, from the usual error bodies. */
export function vendorMessage(body: unknown): string {
  if (typeof body === "string") return body.trim().slice(0, 300) || "no message";
  if (body && typeof body === "object") {
    const b = body as Record<string, unknown>;
    for (const key of ["detail", "error", "title", "message"]) {
      const value = b[key];
      if (typeof value === "string" && value) return value.slice(0, 300);
      if (Array.isArray(value) && value.length > 0) {
        const first = value[0] as { msg?: unknown; loc?: unknown };
        if (typeof first?.msg === "string")
          return `${Array.isArray(first.loc) ? `${first.loc.join(".")}: ` : ""}${first.msg}`.slice(0, 300);
      }
    }
  }
  return "no message";
}

/** One call to the vendor's API, retried while the vendor is busy or failing and time remains. */
export async function vendorFetch(call: VendorCall, request: VendorRequest): Promise<VendorResponse> {
  const url = vendorUrl(call.baseUrl, request.url);
  const backoff = call.backoffMs ?? 500;
  const maxBackoff = call.maxBackoffMs ?? 30_000;
  const random = call.random ?? Math.random;
  for (let attempt = 0; ; attempt++) {
    call.signal.throwIfAborted();
    let failure: VendorError;
    let wait: number | null = null;
    /** The vendor can have taken this attempt's create: it answered 5xx, or did not answer. */
    let mayHaveCreated = false;
    try {
      const response = await fetch(url, {
        method: request.method,
        headers: {
          accept: "application/json",
          ...(call.authorization ? { authorization: call.authorization } : {}),
          ...(request.body === undefined ? {} : { "content-type": "application/json" }),
          ...request.headers,
        },
        body: request.body === undefined ? undefined : JSON.stringify(request.body),
        redirect: "error",
        signal: AbortSignal.any([call.signal, AbortSignal.timeout(call.attemptTimeoutMs ?? 30_000)]),
      });
      const text = await response.text();
      let body: unknown = text;
      try {
        body = text ? JSON.parse(text) : null;
      } catch {
        // not JSON
      }
      if (response.ok || request.accept?.includes(response.status)) {
        return { status: response.status, headers: response.headers, body };
      }
      failure = new VendorError(
        `${call.provider} answered ${response.status} to ${request.method} ${url.pathname}: ${vendorMessage(body)}`,
        response.status,
        RETRYABLE(response.status),
      );
      mayHaveCreated = response.status >= 500;
      wait = retryAfterMs(response.headers.get("retry-after"), call.now());
    } catch (err) {
      if (call.signal.aborted) throw call.signal.reason;
      if (err instanceof VendorError) throw err;
      const reason =
        err instanceof Error && err.name === "TimeoutError" ? "no answer in time" : "connection failed";
      failure = new VendorError(
        `${call.provider}: ${reason} (${request.method} ${url.pathname})`,
        null,
        true,
      );
      mayHaveCreated = !neverSent(err);
    }
    if (request.creates && mayHaveCreated) {
      throw new UnansweredCreate(failure.message, failure.status, true);
    }
    if (!failure.retryable || request.once) throw failure;
    const step = Math.min(maxBackoff, backoff * 2 ** attempt);
    const delay = Math.max(wait ?? 0, Math.round(step * (0.5 + random() / 2)));
    if (call.now() + delay >= call.deadline) throw failure;
    await sleep(call.scheduler, delay, call.signal);
  }
}
