/**
 * The calls a run's prediction makes to its box beside the PUT that creates it: probes (which
 * also teach the process whether the box's probes see a prediction in flight, cog-box.ts), the
 * cancel, and the health-check that tells coglet from Cog ≤ 0.16.
 */
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import { cogBoxes } from "./cog-box.js";
import { cogHealth } from "./cog-health.js";
import { probePrediction } from "./cog-probe.js";
import { redactSecret, type VendorCall, type VendorResponse, vendorFetch } from "./upstream/vendor-http.js";

const CANCEL_TIMEOUT_MS = 3_000;

export interface CogBoxCallsOptions {
  name: string;
  url: string;
  token: string | null;
  scheduler: Scheduler;
  clock: Clock;
}

export class CogBoxCalls {
  constructor(
    private readonly options: CogBoxCallsOptions,
    /** The prediction's path, `predictions/{id}`. */
    private readonly path: string,
    /** No retry waits past this (ms since the epoch). */
    private readonly deadline: number,
    private readonly log: Logger | undefined,
  ) {}

  /** A probe of the prediction (cog-probe.ts): 202 with its state while it is in flight. */
  async probe(signal: AbortSignal): Promise<VendorResponse> {
    const answer = await probePrediction(this.call(signal), this.path);
    if (answer.status === 202) cogBoxes.learnProbes(this.options.url, true);
    return answer;
  }

  /** Whether probes of this box see a prediction in flight: coglet's do, Cog ≤ 0.16's do not. */
  async probesSee(signal: AbortSignal): Promise<boolean> {
    const known = cogBoxes.probesSee(this.options.url);
    if (known !== null) return known;
    const { url, name, token, scheduler, clock } = this.options;
    const health = await cogHealth(url, { name, token, scheduler, clock, signal });
    if (health.status === "UNREACHABLE") return false;
    cogBoxes.learnProbes(url, health.coglet === true);
    return health.coglet === true;
  }

  /**
   * POST /predictions/{id}/cancel: one try with a short time limit; 404 when nothing runs, or
   * (Cog 0.12) once a held prediction ended. Accepted only when answered 200.
   */
  async cancel(): Promise<boolean> {
    try {
      const answer = await vendorFetch(
        { ...this.call(AbortSignal.timeout(CANCEL_TIMEOUT_MS)), attemptTimeoutMs: CANCEL_TIMEOUT_MS },
        { method: "POST", url: `${this.path}/cancel`, accept: [404], once: true },
      );
      this.log?.info({ status: answer.status }, "cancelled the Cog prediction");
      return answer.status !== 404;
    } catch (err) {
      const reason = redactSecret(err instanceof Error ? err.message : "unknown error", this.options.token);
      this.log?.warn({ reason }, "could not cancel the Cog prediction");
      return false;
    }
  }

  private call(signal: AbortSignal): VendorCall {
    const { name, url, token, scheduler, clock } = this.options;
    return {
      provider: name,
      baseUrl: url,
      authorization: token ? `Bearer ${token}` : null,
      scheduler,
      now: () => clock.now().getTime(),
      signal,
      deadline: this.deadline,
    };
  }
}
