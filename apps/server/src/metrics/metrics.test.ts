/**
 * The parts of `Metrics` the end-to-end suite cannot reach cheaply: a store that does not answer
 * at scrape time, and the provider label of runs ended without this process's worker.
 */
import { MODEL_SLUGS } from "@refvid/core";
import type { RunRecord, ServiceStats, StatsStore } from "@refvid/store";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { checkExposition, samplesOf, sampleValue } from "../../test/scrape.js";
import { ManualClock } from "../manual-clock.js";
import { Metrics } from "./metrics.js";

const MODEL_D = "lab-d/model-d/reference-to-video" as const;
const clock = new ManualClock(new Date("2030-01-01T00:00:00.000Z"));
const logger = pino({ level: "silent" });
const stats: ServiceStats = {
  queuedRuns: 2,
  oldestQueuedAt: new Date("2029-12-31T23:59:00.000Z"),
  processingRuns: 1,
  pendingWebhooks: 3,
  reserved: 1_250_000,
};

const metricsFor = () => new Metrics({ models: MODEL_SLUGS, providers: ["simulated", "fal-main"] });

describe("a scrape", () => {
  it("reads the deployment-wide gauges from the store", async () => {
    const store: StatsStore = { serviceStats: async () => stats };
    const text = await metricsFor().scrape({ store, clock, logger });
    checkExposition(text);
    expect(sampleValue(text, "refvid_runs_queued")).toBe(2);
    expect(sampleValue(text, "refvid_runs_queued_oldest_age_seconds")).toBe(60);
    expect(sampleValue(text, "refvid_runs_processing")).toBe(1);
    expect(sampleValue(text, "refvid_webhook_backlog")).toBe(3);
    expect(sampleValue(text, "refvid_wallet_reserved_usd")).toBe(1.25);
    expect(samplesOf(text, "refvid_provider_errors_total").map((s) => s.labels.provider)).toEqual([
      "simulated",
      "fal-main",
    ]);
  });

  it("reports them as NaN while the store fails, and serves the rest", async () => {
    const metrics = metricsFor();
    metrics.runAdmitted(MODEL_D);
    const store: StatsStore = {
      serviceStats: async () => {
        throw new Error("connection refused");
      },
    };
    const text = await metrics.scrape({ store, clock, logger });
    checkExposition(text);
    for (const name of ["refvid_runs_queued", "refvid_webhook_backlog", "refvid_wallet_reserved_usd"]) {
      expect(sampleValue(text, name)).toBeNaN();
    }
    expect(sampleValue(text, "refvid_runs_admitted_total", { model: MODEL_D })).toBe(1);
  });
});

describe("the provider of an ended run", () => {
  const run = (fields: Partial<RunRecord>) =>
    ({
      id: `run_${Math.random()}`,
      endpoint: MODEL_D,
      status: "cancelled",
      startedAt: null,
      upstream: null,
      provider: null,
      ...fields,
    }) as RunRecord;

  it("is the one this process's worker called, else the recorded vendor job or slot", async () => {
    const metrics = metricsFor();
    const held = run({ status: "succeeded", startedAt: new Date() });
    metrics.workerTook();
    metrics.providerCall(held.id, "preview")("succeeded");
    metrics.runEnded(held);
    metrics.workerLet(held.id);
    metrics.runEnded(
      run({ startedAt: new Date(), upstream: { provider: "fal-main", id: "req_1", urls: {} } }),
    );
    metrics.runEnded(run({ startedAt: new Date(), provider: "gpu-box" }));
    metrics.runEnded(run({ startedAt: new Date() })); // held by another process, nothing recorded
    metrics.runEnded(run({})); // never started
    const text = await metrics.scrape({ store: { serviceStats: async () => stats }, clock, logger });
    const ended = samplesOf(text, "refvid_runs_ended_total").map((s) => [s.labels.provider, s.labels.status]);
    expect(ended).toEqual([
      ["preview", "succeeded"],
      ["fal-main", "cancelled"],
      ["gpu-box", "cancelled"],
      ["unknown", "cancelled"],
      ["none", "cancelled"],
    ]);
    expect(sampleValue(text, "refvid_worker_runs_in_flight")).toBe(0);
  });
});
