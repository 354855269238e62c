/**
 * What vendor webhooks save, against polling measured in the same run: status calls per in-flight
 * vendor job per minute, with webhooks on (polling only as a 30 s backstop) and off (a status
 * call a second), for fal and Replicate (the project's protocol servers); and how soon a run ends
 * after its vendor's webhook arrives (p50, p90 over 200 short runs).
 *
 *   npm run build && npx vitest run -c apps/server/vitest.bench.config.ts
 *   BENCH_HOOK_JOBS=100 BENCH_HOOK_JOB_MS=20000 BENCH_HOOK_RUNS=200 BENCH_HOOK_PARALLEL=16 (the defaults)
 */
import { it } from "vitest";
import { eventually, startTestRefvid, type Tenant, type TestRefvid } from "../test/harness.js";
import { FAL_PATH, IMG, REPLICATE_PATH, startFalAndReplicate } from "../test/vendors/fal-replicate.js";
import type { FalServer } from "../test/vendors/fal-server.js";
import type { ReplicateServer } from "../test/vendors/replicate-server.js";

const JOBS = Number(process.env.BENCH_HOOK_JOBS ?? 100);
const JOB_MS = Number(process.env.BENCH_HOOK_JOB_MS ?? 20_000);
const RUNS = Number(process.env.BENCH_HOOK_RUNS ?? 200);
/** Short runs in flight at once while webhook-to-end latency is measured. */
const PARALLEL = Number(process.env.BENCH_HOOK_PARALLEL ?? 16);

interface Stack {
  fal: FalServer;
  replicate: ReplicateServer;
  t: TestRefvid;
  tenant: Tenant;
  close(): Promise<void>;
}

async function stack(webhooks: boolean): Promise<Stack> {
  const vendors = await startFalAndReplicate({ queueMs: 0, latencyMs: 80, outputSeconds: 2 });
  const t = await startTestRefvid({
    ...vendors.env,
    REFVID_VENDOR_WEBHOOKS: webhooks ? "on" : "off",
    REFVID_UPSTREAM_POLL_MS: "1000",
    REFVID_VENDOR_POLL_BACKSTOP_MS: "30000",
    REFVID_WORKER_CONCURRENCY: String(Math.max(JOBS, 16)),
    REFVID_RUN_TIMEOUT_MS: String(JOB_MS * 10),
  });
  const tenant = await t.tenant({
    environment: "live",
    rateLimitPerMinute: 100_000,
    maxConcurrency: 100,
    balanceUsd: "7000.00",
  });
  return {
    fal: vendors.fal,
    replicate: vendors.replicate,
    t,
    tenant,
    close: async () => {
      await t.close();
      await vendors.close();
    },
  };
}

const VENDORS = [
  {
    name: "fal",
    path: FAL_PATH,
    input: (i: number) => ({ prompt: `bench ${i}`, image_urls: [IMG], duration: "4" }),
    server: (s: Stack) => s.fal,
    statusCalls: (s: Stack) => s.fal.stats.statusCalls,
    submits: (s: Stack) => s.fal.stats.submits,
  },
  {
    name: "Replicate",
    path: REPLICATE_PATH,
    input: (i: number) => ({ prompt: `bench ${i}`, reference_image_urls: [IMG] }),
    server: (s: Stack) => s.replicate,
    statusCalls: (s: Stack) => s.replicate.stats.statusCalls,
    submits: (s: Stack) => s.replicate.stats.submits,
  },
] as const;

/** Status calls per in-flight job per minute while `JOBS` jobs of `JOB_MS` each run at once. */
async function statusCallRate(s: Stack, vendor: (typeof VENDORS)[number]): Promise<number> {
  vendor.server(s).knobs.latencyMs = JOB_MS;
  const before = vendor.submits(s);
  const ids: string[] = [];
  for (let i = 0; i < JOBS; i++) {
    const res = await s.tenant.call("POST", vendor.path, { input: vendor.input(i) });
    if (res.status !== 201) throw new Error(`submit answered ${res.status}: ${JSON.stringify(res.body)}`);
    ids.push(res.body.run_id);
  }
  await eventually(
    async () => (vendor.submits(s) - before >= JOBS ? true : undefined),
    60_000,
    "all jobs at the vendor",
  );
  const calls = vendor.statusCalls(s);
  const started = Date.now();
  await eventually(
    async () => {
      for (const id of ids) {
        const run = await s.tenant.call("GET", `/v1/runs/${id}`);
        if (run.body.status === "queued" || run.body.status === "processing") return undefined;
      }
      return true;
    },
    JOB_MS * 5,
    "all runs ended",
  );
  const minutes = (Date.now() - started) / 60_000;
  return (vendor.statusCalls(s) - calls) / JOBS / minutes;
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

/** Milliseconds from a run's vendor webhook arriving to the run ending, over `RUNS` short runs. */
async function hookToEnd(
  s: Stack,
  vendor: (typeof VENDORS)[number],
  done: string,
  parallel: number,
): Promise<number[]> {
  vendor.server(s).knobs.latencyMs = 80;
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < RUNS) {
        const i = next++;
        const res = await s.tenant.call("POST", vendor.path, {
          input: vendor.input(parallel * 100_000 + i),
          sync: true,
        });
        const log = await s.t.admin("GET", `/admin/v1/runs/${res.body.run_id}/vendor-log`);
        const hook = (log.body.data as { kind: string; detail: string | null; at: string }[])
          .filter((e) => e.kind === "hook" && e.detail === done)
          .at(-1);
        if (hook) latencies.push(Date.parse(res.body.completed_at) - Date.parse(hook.at));
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

it("vendor webhooks against polling", async () => {
  const rows: string[] = [];
  for (const vendor of VENDORS) {
    const off = await stack(false);
    const polled = await statusCallRate(off, vendor).finally(() => off.close());
    const on = await stack(true);
    const hooked = await statusCallRate(on, vendor);
    const done = vendor.name === "fal" ? "OK" : "succeeded";
    const alone = await hookToEnd(on, vendor, done, 1);
    const busy = await hookToEnd(on, vendor, done, PARALLEL).finally(() => on.close());
    rows.push(
      `| ${vendor.name} | ${polled.toFixed(1)} | ${hooked.toFixed(2)} | ${(hooked / polled).toFixed(3)} | ` +
        `${quantile(alone, 0.5)} / ${quantile(alone, 0.9)} | ${quantile(busy, 0.5)} / ${quantile(busy, 0.9)} |`,
    );
  }
  process.stdout.write(
    `${[
      `\nVendor webhooks: ${JOBS} jobs of ${JOB_MS / 1000} s in flight at once; then ${RUNS} short runs one at a time, and as many ${PARALLEL} at a time.`,
      `| vendor | status calls / job / min, polling (baseline) | webhooks on | ratio | webhook → run ended p50 / p90 ms, one at a time | ${PARALLEL} at a time |`,
      "|---|---|---|---|---|---|",
      ...rows,
    ].join("\n")}\n`,
  );
}, 3_600_000);
