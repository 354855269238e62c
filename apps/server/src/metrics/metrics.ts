/**
 * The Prometheus metrics of one refvid process (prom-client). Each process has its own registry,
 * made in `buildDeps`, never a module singleton: tests start several servers in one process. The
 * HTTP layer, submit, the worker, the dispatcher and every run end call the hooks below; the
 * store-wide gauges (queue, webhook backlog, reservations) are read from the store at each scrape.
 *
 * Label values come from small fixed sets: methods, route templates, statuses, models, provider
 * names, reasons. Never an organization, key or run id.
 */

import type { ModelSlug } from "@refvid/core";
import type { RunRecord, StatsStore } from "@refvid/store";
import type { Logger } from "pino";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { Clock } from "../clock.js";
import { VendorMetrics } from "./vendor-metrics.js";

/** Why a submit was refused before a run existed. */
const REJECTIONS = ["api_key", "organization", "balance", "budget", "rate_limit"] as const;
export type RunRejection = (typeof REJECTIONS)[number];
/** How one provider call went: `stopped` is the worker's doing (cancel, timeout, shutdown, lost lease). */
export type ProviderCallOutcome = "succeeded" | "failed" | "stopped";
/** What one webhook attempt got: `delivered` is any 2xx; `refused`, the outbound guard (address, DNS, size). */
const WEBHOOK_RESULTS = [
  "delivered",
  "http_error",
  "redirect",
  "timeout",
  "refused",
  "connection_error",
] as const;
export type WebhookAttemptResult = (typeof WEBHOOK_RESULTS)[number];

/** How long a scrape waits for the store before reporting its gauges as unknown (NaN). */
const STORE_TIMEOUT_MS = 2000;

export class Metrics {
  readonly registry = new Registry();
  /** Vendor webhooks and the runs' vendor logs. */
  readonly vendor = new VendorMetrics(this.registry);
  private readonly httpDuration: Histogram<"method" | "route" | "status">;
  private readonly admitted: Counter<"model">;
  private readonly rejected: Counter<"reason">;
  private readonly ended: Counter<"model" | "provider" | "status">;
  private readonly inFlight: Gauge;
  private readonly providerDuration: Histogram<"provider" | "outcome">;
  private readonly providerErrors: Counter<"provider">;
  private readonly webhookAttempts: Counter<"result">;
  private readonly webhookGivenUp: Counter;
  private readonly queued: Gauge;
  private readonly oldestQueued: Gauge;
  private readonly processing: Gauge;
  private readonly webhookBacklog: Gauge;
  private readonly reserved: Gauge;
  /** Each (method, route, status) series of the request histogram: labels are hashed once, not per request. */
  private readonly httpSeries = new Map<string, { observe(seconds: number): void }>();
  /** The provider the worker is calling for each run it holds, for the label of the run's end. */
  private readonly providerOfRun = new Map<string, string>();

  /**
   * `models` and `providers` (the configured ones) start their counters at 0, with every
   * rejection reason and webhook result, so rates and ratios exist before the first event.
   */
  constructor(known: { models: readonly ModelSlug[]; providers: readonly string[] }) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: "refvid_http_request_duration_seconds",
      help: "HTTP requests by method, route template (unmatched: no API route) and status.",
      labelNames: ["method", "route", "status"],
      // Sync submits and event streams last as long as their run.
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers,
    });
    this.admitted = new Counter({
      name: "refvid_runs_admitted_total",
      help: "Runs admitted (queued), by model.",
      labelNames: ["model"],
      registers,
    });
    this.rejected = new Counter({
      name: "refvid_runs_rejected_total",
      help: "Submits refused: a concurrency cap (api_key, organization), the balance, or the rate limit.",
      labelNames: ["reason"],
      registers,
    });
    this.ended = new Counter({
      name: "refvid_runs_ended_total",
      help: "Runs this process ended, by model, provider (none: never started) and terminal status.",
      labelNames: ["model", "provider", "status"],
      registers,
    });
    this.inFlight = new Gauge({
      name: "refvid_worker_runs_in_flight",
      help: "Runs this process's worker is working on.",
      registers,
    });
    this.providerDuration = new Histogram({
      name: "refvid_provider_call_duration_seconds",
      help: "Provider calls (one per run and route tried), by provider and outcome.",
      labelNames: ["provider", "outcome"],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200],
      registers,
    });
    this.providerErrors = new Counter({
      name: "refvid_provider_errors_total",
      help: "Provider calls that failed (the vendor refused or failed the job, or the provider broke).",
      labelNames: ["provider"],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: "refvid_webhook_attempts_total",
      help: "Webhook delivery attempts by result.",
      labelNames: ["result"],
      registers,
    });
    this.webhookGivenUp = new Counter({
      name: "refvid_webhook_deliveries_failed_total",
      help: "Webhook deliveries given up after their last attempt.",
      registers,
    });
    this.queued = new Gauge({
      name: "refvid_runs_queued",
      help: "Runs waiting in the queue, across every process (read from the store at scrape).",
      registers,
    });
    this.oldestQueued = new Gauge({
      name: "refvid_runs_queued_oldest_age_seconds",
      help: "Time since the longest-waiting queued run was admitted; 0 with an empty queue.",
      registers,
    });
    this.processing = new Gauge({
      name: "refvid_runs_processing",
      help: "Runs a worker holds, across every process (read from the store at scrape).",
      registers,
    });
    this.webhookBacklog = new Gauge({
      name: "refvid_webhook_backlog",
      help: "Webhook deliveries pending (due or waiting for a retry), across every process.",
      registers,
    });
    this.reserved = new Gauge({
      name: "refvid_wallet_reserved_usd",
      help: "Money reserved by admitted runs in every organization's wallet, in USD.",
      registers,
    });
    for (const model of known.models) this.admitted.inc({ model }, 0);
    for (const reason of REJECTIONS) this.rejected.inc({ reason }, 0);
    for (const provider of new Set(known.providers)) this.providerErrors.inc({ provider }, 0);
    for (const result of WEBHOOK_RESULTS) this.webhookAttempts.inc({ result }, 0);
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.httpSeries.get(key);
    if (!series) {
      series = this.httpDuration.labels({ method, route, status: String(status) });
      this.httpSeries.set(key, series);
    }
    series.observe(seconds);
  }

  runAdmitted(model: ModelSlug): void {
    this.admitted.inc({ model });
  }

  runRejected(reason: RunRejection): void {
    this.rejected.inc({ reason });
  }

  /** A run this process ended (`completeRun` answered `completed`: exactly one caller does). */
  runEnded(run: RunRecord): void {
    const provider =
      this.providerOfRun.get(run.id) ??
      run.upstream?.provider ??
      run.provider ??
      (run.startedAt ? "unknown" : "none");
    this.ended.inc({ model: run.endpoint, provider, status: run.status });
  }

  workerTook(): void {
    this.inFlight.inc();
  }

  workerLet(runId: string): void {
    this.inFlight.dec();
    this.providerOfRun.delete(runId);
  }

  /** Starts timing a provider call for a run; the returned function ends it with its outcome. */
  providerCall(runId: string, provider: string): (outcome: ProviderCallOutcome) => void {
    this.providerOfRun.set(runId, provider);
    const end = this.providerDuration.startTimer({ provider });
    return (outcome) => {
      end({ outcome });
      if (outcome === "failed") this.providerErrors.inc({ provider });
    };
  }

  webhookAttempt(result: WebhookAttemptResult, givenUp: boolean): void {
    this.webhookAttempts.inc({ result });
    if (givenUp) this.webhookGivenUp.inc();
  }

  /**
   * The exposition: the store-wide gauges are read now, in one store call; while the store does
   * not answer they are NaN (unknown) and the rest is served as usual.
   */
  async scrape(deps: { store: StatsStore; clock: Clock; logger: Logger }): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const stats = await Promise.race([
        deps.store.serviceStats(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("the store did not answer in time")), STORE_TIMEOUT_MS);
        }),
      ]);
      const now = deps.clock.now().getTime();
      this.queued.set(stats.queuedRuns);
      this.oldestQueued.set(
        stats.oldestQueuedAt ? Math.max(0, (now - stats.oldestQueuedAt.getTime()) / 1000) : 0,
      );
      this.processing.set(stats.processingRuns);
      this.webhookBacklog.set(stats.pendingWebhooks);
      this.reserved.set(stats.reserved / 1_000_000);
    } catch (err) {
      deps.logger.warn({ err }, "metrics: could not read the store's stats");
      for (const gauge of [
        this.queued,
        this.oldestQueued,
        this.processing,
        this.webhookBacklog,
        this.reserved,
      ])
        gauge.set(Number.NaN);
    } finally {
      clearTimeout(timer);
    }
    return this.registry.metrics();
  }
}
