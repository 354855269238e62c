// The fair queue stays flat as it grows, on Postgres: loads 1,000, 10,000 and 100,000 queued runs
// across 1,000 organizations (plus runs processing and a history of successes) into fresh
// databases, then times, through a PostgresStore and the server's own `queueStanding`:
//   claim   `claimRuns` of one run, as a worker with one free slot calls it (then handed back);
//   GET     what `GET /v1/runs/{id}` reads for a queued run: the run, its position and estimates;
//   submit  `admitRun`, eight at a time: admissions per second.
// Reports p50/p99 at each size and the ratio to the 1,000-run figures.
//
//   npm run bench            (builds the store and server first; needs the Postgres of TEST_SERVER_URL)
//   BENCH_QUEUE_SIZES=1000,100000 node scripts/bench/queue-pg.mjs   (also BENCH_QUEUE_ITERATIONS)
//
// Target: at 100,000 queued, within 1.5x of the 1,000-run p50 (submit: throughput). Exits 1 when a
// figure is past 2x: a cost that grows with the queue, not noise.
import { createHash } from "node:crypto";
import { performance } from "node:perf_hooks";
import { PostgresStore, pgDatabase } from "@refvid/store";
import { testDatabases } from "@refvid/store/testing";
import pg from "pg";
import { queueStanding } from "../../apps/server/dist/services/queue-standing.js";

const SIZES = (process.env.BENCH_QUEUE_SIZES ?? "1000,10000,100000").split(",").map(Number);
const ITERATIONS = Number(process.env.BENCH_QUEUE_ITERATIONS ?? 300);
const ORGS = 1000;
const ENDPOINT = "lab-d/model-d/reference-to-video";
const TARGET = 1.5;
const FAIL_AT = 2;
const NOW = new Date("2026-11-26T12:00:00Z");

const out = (s = "") => process.stdout.write(`${s}\n`);
const catalog = {
  current: {
    find: (slug) =>
      slug === ENDPOINT
        ? { routes: [{ name: "fal", slot: "fal", maxConcurrency: 20, vendor: true }] }
        : undefined,
  },
};

/** 1,000 organizations with a key each, on a cap and a wallet no load reaches. */
async function organizations(db) {
  await db.query(
    `insert into organizations (id, name, created_at, balance, lifetime_top_ups, tier, concurrency_limit, webhook_secret,
       test_webhook_secret, queue_weight)
     select 'org_' || lpad(g::text, 4, '0'), 'bench ' || g, $1, 1000000000000000, 7000000000, 'scale', 1000000,
       'whsec_YQ==', 'whsec_Yg==', 1 + (g % 3 = 0)::int
     from generate_series(0, $2 - 1) g`,
    [NOW, ORGS],
  );
  await db.query(
    `insert into api_keys (id, organization_id, name, environment, key_hash, key_prefix, max_concurrency,
       rate_limit_per_minute, created_at, priority)
     select 'key_' || lpad(g::text, 4, '0'), 'org_' || lpad(g::text, 4, '0'), null, 'live', md5(g::text), 'sk-live-bench',
       1000000, 1000000000, $1, case when g % 10 = 0 then 'high' else 'normal' end
     from generate_series(0, $2 - 1) g`,
    [NOW, ORGS],
  );
}

/**
 * `queued` queued runs spread over the organizations (a tenth of them in a few heavy ones), 200
 * processing and 500 that succeeded (the duration window), loaded with the triggers off; the
 * counters and turns are then set from the runs as the trigger would have kept them.
 */
async function load(db, queued) {
  const client = await db.connect();
  try {
    await client.query("set session_replication_role = replica");
    await client.query(
      `insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, metadata, reserved,
         unit_price, reserved_seconds, created_at, started_at, completed_at, attempts, priority, lease_owner,
         lease_expires_at, provider, route, charged, billable_seconds)
       select 'run_' || gen_random_uuid(), 'org_' || lpad(o::text, 4, '0'), 'key_' || lpad(o::text, 4, '0'), 'live', $1,
         '{"prompt":"bench"}', status, '{}', 500000, 100000, 5, created_at,
         case when status <> 'queued' then created_at + interval '1 minute' end,
         case when status = 'succeeded' then created_at + interval '1 minute' + (interval '1 second' * (40 + g % 40)) end,
         (status <> 'queued')::int, (o % 10 = 0)::int, case when status = 'processing' then 'w' end,
         case when status = 'processing' then $2::timestamptz + interval '1 hour' end,
         case when status = 'processing' then 'fal' end, case when status = 'succeeded' then 'fal' end,
         case when status = 'succeeded' then 500000 end, case when status = 'succeeded' then 5 end
       from (select g, case when g <= $3 then 'queued' when g <= $3 + 200 then 'processing' else 'succeeded' end as status,
               case when g % 10 = 0 then g % 7 else g % $4 end as o,
               $2::timestamptz - interval '1 ms' * ($3 + 700 - g) * 10 as created_at
             from generate_series(1, $3 + 700) g) s`,
      [ENDPOINT, NOW, queued, ORGS],
    );
    await client.query("set session_replication_role = origin");
    await client.query(
      `insert into queue_counts (organization_id, endpoint, queued, processing)
       select organization_id, endpoint, count(*) filter (where status = 'queued'), count(*) filter (where status = 'processing')
       from runs where status in ('queued', 'processing') group by organization_id, endpoint`,
    );
    await client.query(
      `insert into queue_turns (organization_id, turn) select id, nextval('queue_turn') from organizations order by random()`,
    );
    await client.query(
      `update organizations o set in_flight = c.n from (select organization_id, count(*)::int as n from runs
         where status in ('queued', 'processing') group by organization_id) c where o.id = c.organization_id`,
    );
    await client.query("vacuum (analyze)");
    await client.query("checkpoint").catch(() => {});
  } finally {
    client.release();
  }
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
async function timed(n, fn) {
  const ms = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99) };
}

async function measure(url, queued) {
  const pool = new pg.Pool({ connectionString: url, max: 8 });
  try {
    await organizations(pool);
    const started = performance.now();
    await load(pool, queued);
    const loadedIn = ((performance.now() - started) / 1000).toFixed(1);
    const store = new PostgresStore(pgDatabase(pool));
    const deps = { store, catalog, clock: { now: () => NOW }, config: { workerConcurrency: 4 } };
    const { rows: sample } = await pool.query(
      "select id, organization_id from runs where status = 'queued' order by random() limit $1",
      [ITERATIONS],
    );
    // Warm the plans and the cache, then time.
    for (const { id, organization_id } of sample.slice(0, 20)) {
      await queueStanding(deps, await store.getRun(organization_id, id));
    }
    const get = await timed(sample.length, async (i) => {
      const { id, organization_id } = sample[i];
      const run = await store.getRun(organization_id, id);
      const standing = await queueStanding(deps, run);
      if (!standing) throw new Error(`run ${id} is not queued`);
    });
    const claim = await timed(ITERATIONS, async () => {
      const [run] = await store.claimRuns({ workerId: "bench", limit: 1, leaseMs: 60_000, now: NOW });
      if (!run) throw new Error("nothing to claim");
      await store.releaseRun({ runId: run.id, workerId: "bench" }); // not timed apart: both stay flat
    });
    let next = 0;
    const submits = ITERATIONS * 2;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < submits) {
          const i = next++;
          const o = String(i % ORGS).padStart(4, "0");
          const result = await store.admitRun({
            run: {
              id: `run_bench_${i}_${createHash("md5").update(String(i)).digest("hex").slice(0, 8)}`,
              organizationId: `org_${o}`,
              apiKeyId: `key_${o}`,
              endpoint: ENDPOINT,
              input: { prompt: "bench" },
              webhookUrl: null,
              metadata: {},
              priceUnit: "second",
              unitPrice: 100_000,
              reservedSeconds: 5,
              reserved: 500_000,
              createdAt: NOW,
            },
            now: NOW,
          });
          if (result.kind !== "admitted") throw new Error(`submit ${i}: ${result.kind}`);
        }
      }),
    );
    const perSecond = submits / ((performance.now() - t) / 1000);
    return { queued, loadedIn, claim, get, perSecond };
  } finally {
    await pool.end();
  }
}

const databases = await testDatabases();
const results = [];
try {
  for (const size of SIZES) {
    const result = await measure(await databases.create(), size);
    results.push(result);
    out(
      `loaded ${size.toLocaleString("en")} queued runs across ${ORGS} organizations in ${result.loadedIn} s`,
    );
  }
} finally {
  await databases.destroy();
}

const base = results[0];
const f = (ms) => `${ms.toFixed(2)} ms`;
out();
out(
  "queued runs   claim p50 / p99         GET p50 / p99           submits/s   ratio to the first (claim, GET, submit)",
);
let worst = 0;
for (const r of results) {
  const ratios = [r.claim.p50 / base.claim.p50, r.get.p50 / base.get.p50, base.perSecond / r.perSecond];
  worst = Math.max(worst, ...ratios);
  out(
    `${r.queued.toLocaleString("en").padStart(11)}   ${`${f(r.claim.p50)} / ${f(r.claim.p99)}`.padEnd(22)}  ${`${f(r.get.p50)} / ${f(r.get.p99)}`.padEnd(22)}  ${r.perSecond.toFixed(0).padStart(8)}    ${ratios.map((x) => `${x.toFixed(2)}x`).join(", ")}`,
  );
}
out(`worst ratio ${worst.toFixed(2)}x (target <= ${TARGET}x)`);
if (worst > FAIL_AT) {
  out(`FAILED: a cost grows with the queue (past ${FAIL_AT}x)`);
  process.exitCode = 1;
}
