// The hot path, measured against the stack's own ceiling in the same run. wrk (1 thread, 50
// connections, 6 s) drives poll, account and price preview with ten keys of ten organizations in
// rotation, and submit, against: raw node:http (for reference), the baseline (Express 5 +
// express-openapi-validator over the same spec, answering fixed bodies), and refvid on memory and
// on Postgres. Each measurement is repeated in rounds, servers taking turns, and the median round
// is reported, so a noisy moment of the machine moves both sides alike.
//
// Submits are measured on API processes with no worker: the queue grows, nothing drains it, so the
// figure is the submit path alone. They are spread over as many organizations as the runs need
// (100 in flight each, the scale tier), so no cap answers 429 (10 organizations would be full
// after 1,000 runs, a fraction of a second). Then one client submits one run after another
// (submit latency, queue pickup, webhook delay), and 10,000 sync submits are held open on
// Postgres. Every figure is printed with its target.
//
//   npm run bench                                  (builds first; runs every bench)
//   node scripts/bench/hot-path/hot-path.mjs       (after npm run build)
//   BENCH_SECONDS=6 BENCH_ROUNDS=3 BENCH_STORES=memory,postgres BENCH_PARTS=load,submit,sequential,sync \
//     node scripts/bench/hot-path/hot-path.mjs
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sequentialSubmits } from "./sequential.mjs";
import { SUBMIT, startBaseline, startRaw, startRefvid, submitInput as input, tenants } from "./servers.mjs";
import { syncWaiters } from "./sync-waiters.mjs";
import { wrk } from "./wrk.mjs";

/** The comma-separated values of `name` (all of `known` when unset); exits before anything starts on one it does not know. */
function listOf(name, known) {
  const values = (process.env[name] ?? known.join(",")).split(",");
  const unknown = values.filter((v) => !known.includes(v));
  if (unknown.length) {
    process.stderr.write(
      `${name}: unknown ${unknown.map((v) => `"${v}"`).join(", ")}; use a comma-separated list of ${known.join(", ")}\n`,
    );
    process.exit(2);
  }
  return values;
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const KEYS = 10;
const STORES = listOf("BENCH_STORES", ["memory", "postgres"]);
const PARTS = new Set(listOf("BENCH_PARTS", ["load", "submit", "sequential", "sync"]));
const ENDPOINTS = ["poll", "account", "preview"];
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 300);
const SYNC_WAITERS = Number(process.env.BENCH_SYNC_WAITERS ?? 10_000);
const RUNS_TO_POLL = 20;
/** Submits per second the organizations must hold without a 429 (more than any store reaches here). */
const SUBMIT_CEILING = Number(process.env.BENCH_SUBMIT_CEILING ?? 8000);

execFileSync("bash", [fileURLToPath(new URL("./install-wrk.sh", import.meta.url))], { stdio: "inherit" });

/** The requests of one endpoint for a set of tenants, keys in rotation. */
function requestsFor(endpoint, list) {
  const out = [];
  const rounds = endpoint === "poll" ? RUNS_TO_POLL : 1;
  for (let round = 0; round < rounds; round++) {
    for (const t of list) {
      switch (endpoint) {
        case "poll":
          out.push({ method: "GET", path: `/v1/runs/${t.runIds[round]}`, key: t.key });
          break;
        case "account":
          out.push({ method: "GET", path: "/v1/account", key: t.key });
          break;
        case "preview":
          out.push({
            method: "POST",
            path: "/v1/pricing/preview",
            key: t.key,
            body: { endpoint: "lab-d/model-d/reference-to-video", input: input("A slow dolly shot") },
          });
          break;
        case "submit":
          out.push({ method: "POST", path: SUBMIT, key: t.key, body: { input: input("A slow dolly shot") } });
          break;
      }
    }
  }
  return out;
}

/** Ten organizations with a key each, and runs of theirs that ended, to poll. */
async function setUp(refvid) {
  const list = await tenants(refvid, KEYS);
  await Promise.all(
    list.map(async (t) => {
      t.runIds = [];
      for (let i = 0; i < RUNS_TO_POLL; i++) {
        const res = await fetch(`${refvid.api.url}${SUBMIT}`, {
          method: "POST",
          headers: { authorization: `Key ${t.key}`, "content-type": "application/json" },
          body: JSON.stringify({ input: input(`to poll ${i}`), sync: true }),
        });
        const run = await res.json();
        if (run.status !== "succeeded") throw new Error(`setup run: ${res.status} ${JSON.stringify(run)}`);
        t.runIds.push(run.run_id);
      }
    }),
  );
  return list;
}

/**
 * Each server in turn, `ROUNDS` times, after one warm-up each; per server the round with the
 * median throughput (its latencies with it) and the failures of all rounds.
 */
async function measure(targets, options) {
  const rounds = Object.fromEntries(targets.map((t) => [t.name, []]));
  for (const t of targets) await wrk(t.url, t.requests, { ...options, seconds: 2, warmupSeconds: 0 });
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const stopRecording = t.server?.recordRequestTimes();
      const result = await wrk(t.url, t.requests, { ...options, warmupSeconds: 0, pid: t.pid });
      rounds[t.name].push({ ...result, server: stopRecording?.() ?? null });
    }
  }
  return Object.fromEntries(
    Object.entries(rounds).map(([name, list]) => {
      const median = [...list].sort((a, b) => a.rps - b.rps)[Math.floor(list.length / 2)];
      const errors = list.reduce((n, r) => n + r.errors, 0);
      const requests = list.reduce((n, r) => n + r.requests, 0);
      const cpu = list.map((r) => r.cpuUsPerRequest).sort((a, b) => a - b)[Math.floor(list.length / 2)];
      const steal = Math.max(...list.map((r) => r.steal));
      return [
        name,
        {
          ...median,
          errors,
          requests,
          cpuUsPerRequest: cpu,
          steal,
          rounds: list.map((r) => Math.round(r.rps)),
        },
      ];
    }),
  );
}

const dir = await mkdtemp(join(tmpdir(), "refvid-hot-path-"));
const results = { load: {}, sequential: {}, sync: null };
const running = [];
const stopAll = async () => {
  await Promise.all(running.splice(0).map((s) => s.stop().catch(() => {})));
};
try {
  const options = { seconds: SECONDS, connections: CONNECTIONS, dir };
  // Stand-in tenants for the baselines: the same paths and bodies, run ids they never look up.
  const fixed = Array.from({ length: KEYS }, () => ({
    key: "sk-live-bench",
    runIds: Array.from({ length: RUNS_TO_POLL }, () => `run_${randomUUID()}`),
  }));
  const baselines = async () => {
    const raw = await startRaw();
    const baseline = await startBaseline();
    running.push(raw, baseline);
    return [
      { name: "raw", url: raw.url, pid: raw.pid },
      { name: "baseline", url: baseline.url, pid: baseline.pid },
    ];
  };
  if (PARTS.has("load") || PARTS.has("sequential")) {
    const stores = [];
    for (const store of STORES) {
      const refvid = await startRefvid(store);
      running.push(refvid);
      if (store === "postgres") await refvid.startWorker();
      stores.push({ store, refvid, tenants: await setUp(refvid) });
    }
    if (PARTS.has("load")) {
      const [raw, baseline] = await baselines();
      for (const endpoint of ENDPOINTS) {
        const targets = [
          { ...baseline, requests: requestsFor(endpoint, fixed) },
          ...stores.map((s) => ({
            name: s.store,
            url: s.refvid.api.url,
            pid: s.refvid.api.pid,
            server: s.refvid.api,
            requests: requestsFor(endpoint, s.tenants),
          })),
        ];
        const row = await measure(targets, options);
        row.raw = await wrk(raw.url, requestsFor(endpoint, fixed), { ...options, pid: raw.pid });
        results.load[endpoint] = row;
        process.stderr.write(`${endpoint}: ${JSON.stringify(row)}\n`);
      }
    }
    if (PARTS.has("sequential")) {
      for (const { store, refvid, tenants: list } of stores) {
        results.sequential[store] = await sequentialSubmits(refvid, list[0], SEQUENTIAL);
        process.stderr.write(`sequential ${store}: ${JSON.stringify(results.sequential[store])}\n`);
      }
    }
    await stopAll();
  }
  if (PARTS.has("submit")) {
    // Enough organizations for every submit of the warm-up and the rounds at the ceiling rate.
    const organizations = Math.ceil((SUBMIT_CEILING * (2 + ROUNDS * SECONDS)) / 100);
    const targets = [];
    for (const store of STORES) {
      const refvid = await startRefvid(store, {}, { apiOnly: true });
      running.push(refvid);
      const requests = requestsFor("submit", await tenants(refvid, organizations));
      targets.push({ name: store, url: refvid.api.url, pid: refvid.api.pid, server: refvid.api, requests });
    }
    const [raw, baseline] = await baselines();
    const row = await measure([{ ...baseline, requests: requestsFor("submit", fixed) }, ...targets], options);
    row.raw = await wrk(raw.url, requestsFor("submit", fixed), { ...options, pid: raw.pid });
    row.organizations = organizations;
    results.load.submit = row;
    process.stderr.write(`submit: ${JSON.stringify(row)}\n`);
    await stopAll();
  }
  if (PARTS.has("sync") && STORES.includes("postgres")) {
    const refvid = await startRefvid("postgres");
    running.push(refvid);
    results.sync = await syncWaiters(refvid, SYNC_WAITERS);
    process.stderr.write(`sync: ${JSON.stringify(results.sync)}\n`);
    await stopAll();
  }
} finally {
  await stopAll();
  await rm(dir, { recursive: true, force: true });
}

report(results);

function report({ load, sequential, sync }) {
  const lines = [];
  const out = (text = "") => lines.push(text);
  const checks = [];
  const check = (what, value, target, pass) => checks.push({ what, value, target, pass });
  const krps = (r) => (r ? `${(r.rps / 1000).toFixed(2)}k` : "-");
  const ms = (v) => (v === undefined ? "-" : v < 10 ? v.toFixed(2) : v.toFixed(0));
  out(
    `Hot path: wrk -t1 -c${CONNECTIONS} -d${SECONDS}s, median of ${ROUNDS} rounds per server (raw node:http: one run); ` +
      `poll, account and preview with ${KEYS} keys of ${KEYS} organizations in rotation` +
      (load.submit ? `, submit over ${load.submit.organizations} organizations with no worker` : ""),
  );
  out();
  out(
    "endpoint | raw node:http | Express+validator p50/p99 ms | refvid memory (×baseline) p50/p99 ms | refvid Postgres (×memory) p50/p99 ms",
  );
  for (const [endpoint, row] of Object.entries(load)) {
    const b = row.baseline;
    const m = row.memory;
    const p = row.postgres;
    out(
      [
        endpoint.padEnd(8),
        krps(row.raw).padEnd(13),
        `${krps(b)} ${ms(b.p50)}/${ms(b.p99)}`.padEnd(28),
        m
          ? `${krps(m)} (${(m.rps / b.rps).toFixed(2)}×) ${ms(m.p50)}/${ms(m.p99)}`.padEnd(36)
          : "-".padEnd(36),
        p ? `${krps(p)} (${m ? (p.rps / m.rps).toFixed(2) : "-"}×) ${ms(p.p50)}/${ms(p.p99)}` : "-",
      ].join(" | "),
    );
    for (const [store, r] of Object.entries({ baseline: b, memory: m, postgres: p })) {
      if (r && r.errors > 0)
        check(
          `${endpoint} on ${store}: every request answered 2xx`,
          `${r.errors} of ${r.requests} not`,
          "0",
          false,
        );
    }
    if (m)
      check(
        `memory ${endpoint} throughput`,
        `${(m.rps / b.rps).toFixed(2)}× baseline`,
        "≥ 0.9×",
        m.rps >= 0.9 * b.rps,
      );
    if (p && m) {
      const target = endpoint === "submit" ? 0.5 : endpoint === "preview" ? null : 0.8;
      if (target)
        check(
          `Postgres ${endpoint} throughput`,
          `${(p.rps / m.rps).toFixed(2)}× memory`,
          `≥ ${target}×`,
          p.rps >= target * m.rps,
        );
    }
    for (const [store, r] of Object.entries({ memory: m, postgres: p })) {
      // The baseline's own ratio, for context: on a small VM the stack alone can miss it.
      if (r)
        check(
          `${store} ${endpoint} tail (baseline ${(b.p99 / b.p50).toFixed(1)}×${r.server ? `, in-server ${(r.server.p99 / r.server.p50).toFixed(1)}×` : ""})`,
          `p99 ${ms(r.p99)} ms = ${(r.p99 / r.p50).toFixed(1)}× p50 ${ms(r.p50)} ms`,
          "≤ 5×",
          r.p99 <= 5 * r.p50,
        );
    }
  }
  out();
  out(
    "server CPU per request, µs (median round): " +
      Object.entries(load)
        .map(
          ([e, row]) =>
            `${e} ${["baseline", "memory", "postgres"]
              .filter((n) => row[n])
              .map((n) => `${n} ${Math.round(row[n].cpuUsPerRequest)}`)
              .join(", ")}`,
        )
        .join("; "),
  );
  const steal = Math.max(
    ...Object.values(load).flatMap((row) =>
      ["baseline", "memory", "postgres"].filter((n) => row[n]).map((n) => row[n].steal),
    ),
  );
  out(`most CPU time taken by the hypervisor (steal) during a round: ${(steal * 100).toFixed(0)}%`);
  out(
    "req/s of each round: " +
      Object.entries(load)
        .map(
          ([e, row]) =>
            `${e} ${["baseline", "memory", "postgres"]
              .filter((n) => row[n])
              .map((n) => `${n} ${row[n].rounds.join("/")}`)
              .join(", ")}`,
        )
        .join("; "),
  );
  if (Object.keys(sequential).length) {
    out();
    out(`One client, ${SEQUENTIAL} submits one after another, each with a webhook (ms, p50/p99/max)`);
    out("store    | submit         | pickup (created→started) | webhook (completed→arrived)");
    for (const [store, s] of Object.entries(sequential)) {
      const f = (x) => `${ms(x.p50)}/${ms(x.p99)}/${ms(x.max)}`;
      out(`${store.padEnd(8)} | ${f(s.submit).padEnd(14)} | ${f(s.pickup).padEnd(24)} | ${f(s.webhook)}`);
      if (store === "postgres") {
        check("Postgres queue pickup p50", `${ms(s.pickup.p50)} ms`, "≤ 2 ms", s.pickup.p50 <= 2);
        check("Postgres queue pickup p99", `${ms(s.pickup.p99)} ms`, "≤ 10 ms", s.pickup.p99 <= 10);
      }
      check(
        `${store} webhook sent after the end, p50`,
        `${ms(s.webhook.p50)} ms`,
        "≤ 5 ms",
        s.webhook.p50 <= 5,
      );
    }
  }
  if (sync) {
    const mib = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    out();
    out(
      `${sync.count} sync submits held open on one API process (Postgres): RSS ${mib(sync.idle)} idle, ${mib(sync.peak)} at peak (+${mib(sync.extra)}), ${mib(sync.held)} (+${mib(sync.heldExtra)}) at the least in the 20 s they were held; ${sync.answered} answered with their run, drained in ${sync.drainSeconds.toFixed(1)} s`,
    );
    if (sync.sample.length) out(`  not answered: ${sync.sample.join("; ")}`);
    check("sync waiters: extra RSS", `+${mib(sync.extra)}`, "≤ 200 MB", sync.extra <= 200e6);
    check(
      "sync waiters: every one answered",
      `${sync.answered} of ${sync.count}`,
      `${sync.count}`,
      sync.answered === sync.count,
    );
  }
  out();
  out(
    "target                                                         | measured                         | target   | result",
  );
  for (const c of checks)
    out(
      `${c.what.padEnd(62)} | ${String(c.value).padEnd(32)} | ${c.target.padEnd(8)} | ${c.pass ? "pass" : "MISS"}`,
    );
  out();
  out(`${checks.filter((c) => c.pass).length} of ${checks.length} targets met`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
