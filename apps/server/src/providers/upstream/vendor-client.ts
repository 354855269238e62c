/**
 * What every vendor adapter does around `vendorFetch`: calls bounded by the run's deadline, a
 * best-effort cancel, and the credential scrubbed from every message.
 */
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../../clock.js";
import {
  redactSecret,
  UnansweredCreate,
  type VendorCall,
  VendorError,
  type VendorRequest,
  type VendorResponse,
  vendorFetch,
} from "./vendor-http.js";

const ATTEMPT_TIMEOUT_MS = 30_000;

export interface VendorClientOptions {
  /** The provider's name, for messages. */
  name: string;
  baseUrl: string;
  /** The credential, scrubbed from messages; null when the vendor needs none. */
  token: string | null;
  /** How the credential is sent: `Key` (fal) or `Bearer`. */
  scheme: "Key" | "Bearer";
  scheduler: Scheduler;
  clock: Clock;
}

export class VendorClient {
  constructor(private readonly options: VendorClientOptions) {}

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  now(): number {
    return this.options.clock.now().getTime();
  }

  /** One API call, retried by the shared layer, no attempt outlasting the deadline. */
  async call(signal: AbortSignal, deadline: number, request: VendorRequest): Promise<VendorResponse> {
    const attemptTimeoutMs = Math.max(1, Math.min(ATTEMPT_TIMEOUT_MS, deadline - this.now()));
    try {
      return await vendorFetch({ ...this.callOf(signal, deadline), attemptTimeoutMs }, request);
    } catch (err) {
      if (err instanceof VendorError) {
        const Kind = err instanceof UnansweredCreate ? UnansweredCreate : VendorError;
        throw new Kind(this.redact(err.message), err.status, err.retryable);
      }
      throw err;
    }
  }

  /** One try at cancelling a vendor job, with a short limit of its own; failures are only logged. */
  async cancelOnce(
    request: Pick<VendorRequest, "method" | "url" | "accept">,
    {
      timeoutMs,
      log,
      what,
      upstreamId,
    }: { timeoutMs: number; log?: Logger | undefined; what: string; upstreamId: string },
  ): Promise<void> {
    try {
      const answer = await vendorFetch(
        {
          ...this.callOf(AbortSignal.timeout(timeoutMs), this.now() + timeoutMs),
          attemptTimeoutMs: timeoutMs,
        },
        { ...request, once: true },
      );
      log?.info({ upstreamId, status: answer.status }, `cancelled the ${what}`);
    } catch (err) {
      const reason = err instanceof Error ? this.redact(err.message) : "unknown error";
      log?.warn({ upstreamId, reason }, `could not cancel the ${what}`);
    }
  }

  /** `message` without the credential, even where a vendor echoed it back. */
  redact(message: string): string {
    return redactSecret(message, this.options.token);
  }

  private callOf(signal: AbortSignal, deadline: number): VendorCall {
    const { name, token, scheme, scheduler } = this.options;
    return {
      provider: name,
      baseUrl: this.options.baseUrl,
      authorization: token === null ? null : `${scheme} ${token}`,
      scheduler,
      now: () => this.now(),
      signal,
      deadline,
    };
  }
}
