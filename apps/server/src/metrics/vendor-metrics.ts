/** The vendor side of runs: webhooks received, and the run vendor logs' entries (adoptions, orphans, doubts). */
import type { VendorEventKind } from "@refvid/store";
import { Counter, type Registry } from "prom-client";

export type VendorHookResult = "accepted" | "refused" | "unknown_run";
export type VendorLogMetricKind = Exclude<VendorEventKind, "hook">;

export class VendorMetrics {
  private readonly hooks: Counter<"provider" | "result">;
  private readonly logged: Counter<"provider" | "kind">;

  constructor(registry: Registry) {
    const registers = [registry];
    this.hooks = new Counter({
      name: "refvid_vendor_webhooks_total",
      help: "Vendor webhooks received, by route and result (refused: did not verify; unknown_run: no such run or route).",
      labelNames: ["provider", "result"],
      registers,
    });
    this.logged = new Counter({
      name: "refvid_vendor_jobs_events_total",
      help: "Vendor job events written to runs' vendor logs: lost create answers, adoptions, creates sent again, orphans, cancels, and doubts (uncertain).",
      labelNames: ["provider", "kind"],
      registers,
    });
  }

  hook(provider: string, result: VendorHookResult): void {
    this.hooks.inc({ provider, result });
  }

  log(provider: string, kind: VendorLogMetricKind): void {
    this.logged.inc({ provider, kind });
  }
}
