/**
 * Whether each model vendor of the routing file can be reached, for `/readyz`: probed in the
 * background (at start, then every `intervalMs`), so the probe never waits on a vendor and one bad
 * vendor never makes the process unready. A Cog box reports its own state; fal and Replicate are
 * asked a harmless question with the credential, which also tells whether they accept it. Each Cog
 * box also shows how its predictions are made (async, or held requests) and a prediction it runs
 * that Cog did not cancel (providers/cog-box.ts).
 */
import type { Logger } from "pino";
import type { Clock, Scheduler } from "../clock.js";
import { PeriodicTask } from "../periodic-task.js";
import { cogBoxes } from "../providers/cog-box.js";
import { cogHealth } from "../providers/cog-health.js";
import { vendorFetch } from "../providers/upstream/vendor-http.js";
import type { ProviderEntry } from "./catalog-file.js";

export type Reachability = "ok" | "unreachable" | "unauthorized" | "not_ready" | "unknown";

const PROBE_TIMEOUT_MS = 5_000;

/** A Cog box in `/readyz`. */
export interface CogBoxState {
  /**
   * How this process creates the box's predictions: async, their end by webhook; or held requests,
   * because vendor webhooks are off, or because the box answered an async create synchronously.
   */
  predictions: "async" | "sync_webhooks_off" | "sync_no_async";
  /** A prediction of a stopped run that Cog did not cancel and that still runs; none is started meanwhile. */
  busy_uncancellable: { prediction_id: string; since: string } | null;
}

/** Each Cog box of the routing file, by provider name, as this process knows it now. */
export function cogBoxStates(
  providers: readonly ProviderEntry[],
  vendorWebhooks: boolean,
): Record<string, CogBoxState> {
  return Object.fromEntries(
    providers
      .filter((provider) => provider.type === "cog")
      .map((provider): [string, CogBoxState] => {
        const url = provider.url ?? "";
        const running = cogBoxes.uncancellable(url);
        const busy = running && { prediction_id: running.predictionId, since: running.since.toISOString() };
        const predictions = !vendorWebhooks
          ? "sync_webhooks_off"
          : cogBoxes.answersSync(url)
            ? "sync_no_async"
            : "async";
        return [provider.name, { predictions, busy_uncancellable: busy }];
      }),
  );
}

export class ProviderReachability {
  private readonly states = new Map<string, Reachability>();
  private readonly task: PeriodicTask;

  constructor(
    private readonly providers: readonly ProviderEntry[],
    private readonly deps: { scheduler: Scheduler; clock: Clock; logger: Logger; intervalMs?: number },
  ) {
    for (const provider of this.vendors()) this.states.set(provider.name, "unknown");
    this.task = new PeriodicTask({
      intervalMs: deps.intervalMs ?? 30_000,
      scheduler: deps.scheduler,
      logger: deps.logger,
      failureMessage: "probing the model vendors failed",
      step: () => this.probeAll(),
    });
  }

  /** Each vendor's last known state, by provider name; empty without vendors. */
  snapshot(): Record<string, Reachability> {
    return Object.fromEntries(this.states);
  }

  start(): void {
    if (this.states.size > 0) this.task.start({ immediately: true });
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  async probeAll(): Promise<void> {
    await Promise.all(
      this.vendors().map(async (provider) => {
        const state = await this.probe(provider);
        if (state !== this.states.get(provider.name) && state !== "ok") {
          this.deps.logger.warn({ provider: provider.name, state }, "model vendor is not reachable");
        }
        this.states.set(provider.name, state);
      }),
    );
  }

  private vendors(): ProviderEntry[] {
    return this.providers.filter((p) => p.type === "fal" || p.type === "replicate" || p.type === "cog");
  }

  private async probe(provider: ProviderEntry): Promise<Reachability> {
    const url = provider.url ?? "";
    if (provider.type === "cog") {
      const health = await cogHealth(url, {
        name: provider.name,
        token: provider.token,
        timeoutMs: PROBE_TIMEOUT_MS,
        clock: this.deps.clock,
        scheduler: this.deps.scheduler,
      });
      if (health.ok) return "ok";
      return health.status === "UNREACHABLE" ? "unreachable" : "not_ready";
    }
    const now = this.deps.clock.now().getTime();
    try {
      const answer = await vendorFetch(
        {
          provider: provider.name,
          baseUrl: url,
          authorization: provider.token
            ? `${provider.type === "fal" ? "Key" : "Bearer"} ${provider.token}`
            : null,
          scheduler: this.deps.scheduler,
          now: () => this.deps.clock.now().getTime(),
          signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
          deadline: now,
          attemptTimeoutMs: PROBE_TIMEOUT_MS,
        },
        // fal has no health call: any answer to its root, but a refused key, is a reachable fal.
        {
          method: "GET",
          url: provider.type === "replicate" ? "v1/account" : "",
          once: true,
          accept: [400, 401, 403, 404, 405],
        },
      );
      return answer.status === 401 || answer.status === 403 ? "unauthorized" : "ok";
    } catch {
      return "unreachable";
    }
  }
}
