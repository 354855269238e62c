/**
 * The vendor side of one run on one route, as its adapter sees it (`VendorSide`): the webhook URL
 * to give the vendor, waits that end early when a webhook for the run verified (in any process:
 * the store's `vendor` event), the jobs the run's webhooks named, and the run's vendor log.
 */
import type { ProviderRoute } from "../catalog/routes.js";
import type { AppDeps } from "../deps.js";
import type { VendorLogKind, VendorSide } from "../providers/types.js";

export interface ClosableVendorSide extends VendorSide {
  /** Stops listening for the run's webhooks (the attempt ended). */
  close(): void;
}

export function vendorSide(
  deps: Pick<AppDeps, "config" | "hookUrls" | "events" | "store" | "scheduler" | "clock" | "metrics">,
  runId: string,
  route: Pick<ProviderRoute, "name">,
): ClosableVendorSide {
  // Webhooks heard and taken: one heard between a look at the log and the next pause ends that pause at once.
  let heard = 0;
  let taken = 0;
  let wake: (() => void) | null = null;
  const off = deps.events.onVendorHook(runId, () => {
    heard++;
    wake?.();
  });
  return {
    hookUrl: deps.config.vendorWebhooks ? deps.hookUrls.url(route.name, runId) : null,
    backstopMs: deps.config.vendorBackstopMs,
    pause(ms, signal) {
      signal.throwIfAborted();
      if (heard > taken) {
        taken = heard;
        return Promise.resolve(true);
      }
      return new Promise<boolean>((resolve, reject) => {
        const done = (hooked: boolean) => {
          cancelTimer();
          signal.removeEventListener("abort", aborted);
          wake = null;
          taken = heard;
          resolve(hooked);
        };
        const aborted = () => {
          cancelTimer();
          wake = null;
          reject(signal.reason);
        };
        const cancelTimer = deps.scheduler.setTimeout(() => done(false), ms);
        signal.addEventListener("abort", aborted, { once: true });
        wake = () => done(true);
      });
    },
    async hooks() {
      const log = await deps.store.listVendorEvents(runId);
      return log.flatMap((event) =>
        event.kind === "hook" && event.provider === route.name && event.upstreamId
          ? [{ upstreamId: event.upstreamId, status: event.detail }]
          : [],
      );
    },
    hookPayload: (upstreamId, status) =>
      deps.store.vendorHookPayload({ runId, provider: route.name, upstreamId, status }),
    async heldByAnotherRun(upstreamId) {
      const owner = await deps.store.findRunByUpstream({ provider: route.name, upstreamId });
      return owner !== null && owner !== runId;
    },
    log: (kind, upstreamId, detail) => writeVendorLog(deps, runId, route.name, { kind, upstreamId, detail }),
    close: off,
  };
}

/** Adds an entry to a run's vendor log, and counts it. */
export async function writeVendorLog(
  deps: Pick<AppDeps, "store" | "clock" | "metrics">,
  runId: string,
  route: string,
  entry: { kind: VendorLogKind; upstreamId: string | null; detail: string | null },
): Promise<void> {
  deps.metrics.vendor.log(route, entry.kind);
  await deps.store.addVendorEvent({ runId, provider: route, ...entry, at: deps.clock.now() });
}
