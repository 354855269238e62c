// Cost that does not grow with history, on Postgres: loads a large history (1,000,000 runs for
// one organization, plus a few other organizations) and a small one (1,000 runs, the baseline) into
// two fresh databases with set-based SQL, then times poll and search through a PostgresStore on
// each and reports p50/p99 latency and the large/small ratio of p50. Prints the plans of the
// first-page, deep-page and filtered-page queries so a reader sees which index serves them.
//
//   npm run bench            (builds the store first; needs the Postgres of TEST_SERVER_URL)
//   BENCH_PG_RUNS=200000 node scripts/bench/search-pg.mjs   (also BENCH_PG_SMALL, BENCH_PG_ITERATIONS)
//
// Fails (exit 1) when poll or the first search page costs more than 5x the baseline at p50: a scan.
import { performance } from "node:perf_hooks";
import { PostgresStore, pgDatabase, searchRunsQuery } from "@refvid/store";
import { TEST_SERVER_URL, testDatabases } from "@refvid/store/testing";
import pg from "pg";

const LARGE = Number(process.env.BENCH_PG_RUNS ?? 1_000_000);
const SMALL = Number(process.env.BENCH_PG_SMALL ?? 1_000);
const ITERATIONS = Number(process.env.BENCH_PG_ITERATIONS ?? 500);
/** An operation stops early once it has spent this long, so a pathological plan cannot hang the bench. */
const OP_BUDGET_MS = Number(process.env.BENCH_PG_OP_BUDGET_MS ?? 15_000);
/** Other organizations, each with this share of the main one's history. */
const OTHER_ORGS = 4;
const OTHER_SHARE = 0.05;
const MAX_P50_RATIO = 5;
const END = new Date("2026-04-01T00:00:00Z"); // newest run; history spans the 90 days before
const DAY = 86_400_000;
const ENDPOINTS = [
  "lab-a/model-a/reference-to-video",
  "lab-b/model-b/reference-to-video",
  "lab-c/model-c/reference-to-video",
  "lab-d/model-d/reference-to-video",
];
const FILTER_ENDPOINT = ENDPOINTS[1];

const out = (s = "") => process.stdout.write(`${s}\n`);
const secondsSince = (t) => ((performance.now() - t) / 1000).toFixed(1);

/**
 * `runs` runs for one organization, newest first (g = 1 is the newest), created_at spread evenly
 * over 90 days at millisecond precision (as the server writes it). The newest few are in flight
 * (queued, then processing: charged null); the rest are terminal with their charge, in a mix of
 * 84% succeeded, 10% failed, 3% timeout, 3% cancelled across four endpoints (40/30/20/10%).
 */
const LOAD_SQL = `
insert into runs (id, organization_id, api_key_id, environment, endpoint, input, status, webhook_url, metadata, reserved,
  unit_price, reserved_seconds, charged, billable_seconds, output, error, progress, created_at, started_at,
  completed_at, lease_owner, lease_expires_at, attempts)
select 'run_' || gen_random_uuid(), $1, $2, 'live', endpoint,
  jsonb_build_object('prompt', 'A slow dolly shot of @Image1, take ' || (g % 1000), 'image_urls',
    jsonb_build_array('https://cdn.example.com/refs/' || (g % 5000) || '.png'), 'duration', reserved_seconds),
  status,
  case when g % 3 = 0 then 'https://hooks.example.com/refvid' end,
  jsonb_build_object('batch', (g % 50)::text),
  unit_price * reserved_seconds, unit_price, reserved_seconds,
  case when status = 'succeeded' then unit_price * billable when status in ('queued', 'processing') then null else 0 end,
  case when status = 'succeeded' then billable when status in ('queued', 'processing') then null else 0 end,
  case when status = 'succeeded' then jsonb_build_object('fileId', 'file_' || md5(g::text), 'fileName', 'output.mp4',
    'contentType', 'video/mp4', 'durationSeconds', billable) end,
  case status
    when 'failed' then '{"type":"provider_error","code":502,"message":"upstream failed"}'::jsonb
    when 'timeout' then '{"type":"timeout","code":504,"message":"run exceeded its time limit"}'::jsonb
    when 'cancelled' then '{"type":"cancelled","code":499,"message":"cancelled by the client"}'::jsonb
  end,
  case when status = 'succeeded' then 1 when status = 'processing' then 0.5 end,
  created_at,
  case when status not in ('queued', 'cancelled') then created_at + interval '2 seconds' end,
  case when status not in ('queued', 'processing') then created_at + interval '95 seconds' end,
  case when status = 'processing' then 'worker-bench' end,
  case when status = 'processing' then $4::timestamptz + interval '5 minutes' end,
  case when status = 'queued' then 0 else 1 end
from (
  select g,
    date_trunc('milliseconds', $4::timestamptz - interval '90 days' * ((g - 1 + r1) / $3::float8)) as created_at,
    case
      when g <= $5 then 'queued'
      when g <= 2 * $5 then 'processing'
      when r2 < 0.84 then 'succeeded'
      when r2 < 0.94 then 'failed'
      when r2 < 0.97 then 'timeout'
      else 'cancelled'
    end as status,
    case when r3 < 0.4 then '${ENDPOINTS[0]}' when r3 < 0.7 then '${ENDPOINTS[1]}'
         when r3 < 0.9 then '${ENDPOINTS[2]}' else '${ENDPOINTS[3]}' end as endpoint,
    case when r3 < 0.4 then 71000 when r3 < 0.7 then 50000 when r3 < 0.9 then 120000 else 35000 end::bigint as unit_price,
    reserved_seconds,
    greatest(1, reserved_seconds - (g % 3)) as billable
  from (
    select g, random() as r1, random() as r2, random() as r3, 4 + (g % 7) as reserved_seconds
    from generate_series($6::int, $7::int) as g
  ) raw
) shaped`;

async function loadHistory(url, runs) {
  const started = performance.now();
  const store = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max: 1 })));
  const tenants = [];
  for (let o = 0; o <= OTHER_ORGS; o++) {
    const organizationId = o === 0 ? "org_bench_main" : `org_bench_other_${o}`;
    await store.createOrganization({
      id: organizationId,
      name: organizationId,
      webhookSecret: "whsec_YmVuY2g=",
      now: new Date(END.getTime() - 91 * DAY),
    });
    const apiKeyId = `key_${organizationId}`;
    await store.createApiKey({
      id: apiKeyId,
      organizationId,
      name: null,
      environment: "live",
      keyHash: `hash_${organizationId}`,
      keyPrefix: "sk-live-benc",
      maxConcurrency: 100,
      rateLimitPerMinute: 1000,
      now: new Date(END.getTime() - 91 * DAY),
    });
    tenants.push({
      organizationId,
      apiKeyId,
      runs: o === 0 ? runs : Math.max(10, Math.round(runs * OTHER_SHARE)),
    });
  }
  await store.close();

  // Two loader connections (one per core), each inserting slices of the histories. They skip the
  // foreign-key triggers (session_replication_role = replica): every row names the organization and
  // key made above, which the check after the load confirms. CHECK constraints still hold every row.
  const slices = tenants.flatMap((t) => {
    const inFlight = Math.max(5, Math.round(t.runs / 10_000));
    const size = Math.max(1, Math.ceil(t.runs / (t.runs >= 100_000 ? 8 : 1)));
    const parts = [];
    for (let from = 1; from <= t.runs; from += size) {
      parts.push([
        t.organizationId,
        t.apiKeyId,
        t.runs,
        END,
        inFlight,
        from,
        Math.min(t.runs, from + size - 1),
      ]);
    }
    return parts;
  });
  const loader = async (seed) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("select setseed($1)", [seed]);
      await client.query("set synchronous_commit = off");
      // Needs a superuser (the local server's postgres); others load with the triggers, slower.
      await client.query("set session_replication_role = replica").catch(() => {});
      for (let slice = slices.shift(); slice; slice = slices.shift()) await client.query(LOAD_SQL, slice);
    } finally {
      await client.end();
    }
  };
  await Promise.all([loader(0.42), loader(-0.42)]);
  const inserted = secondsSince(started);

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const orphans = await client.query(
      `select count(*)::int as n from runs r
       where not exists (select 1 from organizations o where o.id = r.organization_id)
          or not exists (select 1 from api_keys k where k.id = r.api_key_id and k.organization_id = r.organization_id)`,
    );
    if (orphans.rows[0].n !== 0)
      throw new Error(`${orphans.rows[0].n} runs without their organization or key`);
    await client.query("vacuum (analyze) runs");
    // The load's dirty pages are written now, not during the timing (needs a superuser or pg_checkpoint).
    await client.query("checkpoint").catch(() => {});
    const { rows } = await client.query(
      "select count(*)::int as n, pg_size_pretty(pg_total_relation_size('runs')) as size from runs",
    );
    out(
      `loaded ${rows[0].n} runs (${rows[0].size} with indexes) in ${secondsSince(started)} s (insert ${inserted} s, then check, vacuum analyze, checkpoint)`,
    );
  } finally {
    await client.end();
  }
  return tenants[0];
}

/** The operations timed, the same on both histories; `i` varies the run, cursor, filter or window. */
async function operations(url, organizationId, runs) {
  const db = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const sample = await db.query(
      "select id from runs where organization_id = $1 order by random() limit $2",
      [organizationId, Math.min(ITERATIONS, runs)],
    );
    const ids = sample.rows.map((r) => r.id);
    // Cursors about half-way down the history (~500k deep on 1M): the last run of a page there.
    const cursors = await db.query(
      `select created_at, id from runs where organization_id = $1 order by created_at desc, id desc
       offset $2 limit 50`,
      [organizationId, Math.floor(runs / 2)],
    );
    const after = cursors.rows.map((r) => ({ createdAt: r.created_at, id: r.id }));
    const filter = (i) => ({
      statuses: ["succeeded"],
      endpoint: FILTER_ENDPOINT,
      metadata: { batch: String(i % 50) },
    });
    const windowOf = (i) => {
      const day = 1 + (i % 88);
      return {
        createdAfter: new Date(END.getTime() - (day + 1) * DAY),
        createdBefore: new Date(END.getTime() - day * DAY),
      };
    };
    const list = [
      {
        label: "poll (getRun by id)",
        kind: "poll",
        run: (s, i) => s.getRun(organizationId, ids[i % ids.length]),
      },
      {
        label: "search: first page (limit 21)",
        kind: "first",
        search: () => ({ organizationId, environment: "live", limit: 21 }),
      },
      {
        label: "search: deep page (keyset, ~half)",
        kind: "deep",
        search: (i) => ({ organizationId, environment: "live", limit: 21, after: after[i % after.length] }),
      },
      {
        label: "search: status+endpoint+metadata",
        kind: "filtered",
        search: (i) => ({ organizationId, environment: "live", limit: 21, ...filter(i) }),
      },
      {
        label: "search: 1-day created window",
        kind: "window",
        search: (i) => ({ organizationId, environment: "live", limit: 21, ...windowOf(i) }),
      },
    ];
    return { list, ids };
  } finally {
    await db.end();
  }
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];

async function measure(store, op) {
  const call = (i) => (op.run ? op.run(store, i) : store.searchRuns(op.search(i)));
  for (let i = 0; i < Math.min(50, ITERATIONS); i++) await call(i + 7919); // warm up
  const times = [];
  let rows = 0;
  const start = performance.now();
  for (let i = 0; i < ITERATIONS && performance.now() - start < OP_BUDGET_MS; i++) {
    const t = performance.now();
    const result = await call(i);
    times.push(performance.now() - t);
    rows += Array.isArray(result) ? result.length : result ? 1 : 0;
  }
  if (rows === 0) throw new Error(`${op.label}: returned nothing; the bench data is wrong`);
  times.sort((a, b) => a - b);
  return {
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    n: times.length,
    rowsPerOp: rows / times.length,
  };
}

/** A PostgresStore on one history, its operations, and two checks that the bench measures the right thing. */
async function prepare(url, main, runs) {
  const store = new PostgresStore(pgDatabase(new pg.Pool({ connectionString: url, max: 1 })));
  const { list: ops, ids } = await operations(url, main.organizationId, runs);
  // Another organization does not see the run: the organization filter holds.
  if (await store.getRun("org_bench_other_1", ids[0]))
    throw new Error("poll found a run of another organization");
  return { store, ops };
}

async function explain(url, search, title) {
  const db = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { text, params } = searchRunsQuery(search);
    const plan = await db.query(`explain ${text}`, params);
    out(`\n-- ${title}\n-- ${text}\n-- params: ${JSON.stringify(params)}`);
    for (const r of plan.rows) out(`   ${r["QUERY PLAN"]}`);
  } finally {
    await db.end();
  }
}

const startedAll = performance.now();
const databases = await testDatabases();
/** Drops every bench database, once; the signal handler and the normal ending share the one drop. */
let dropping;
const destroy = () => {
  dropping ??= databases.destroy();
  return dropping;
};
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    interrupted = true;
    process.stderr.write(`\n${signal}: dropping the bench databases\n`);
    destroy().finally(() => process.exit(130));
  });
}

let failed = false;
try {
  out(
    `Postgres search bench on ${new URL(TEST_SERVER_URL).host}: ${LARGE} runs vs ${SMALL} runs (+${OTHER_ORGS} other organizations with ${OTHER_SHARE * 100}% each)`,
  );
  const smallUrl = await databases.create();
  const smallMain = await loadHistory(smallUrl, SMALL);
  const largeUrl = await databases.create();
  const largeMain = await loadHistory(largeUrl, LARGE);

  // Each operation on the small history, then at once on the large one, so that drift in the
  // machine's load between the two measurements stays small.
  const histories = [await prepare(smallUrl, smallMain, SMALL), await prepare(largeUrl, largeMain, LARGE)];
  const small = [];
  const large = [];
  try {
    for (let i = 0; i < histories[0].ops.length; i++) {
      small.push({ op: histories[0].ops[i], ...(await measure(histories[0].store, histories[0].ops[i])) });
      large.push({ op: histories[1].ops[i], ...(await measure(histories[1].store, histories[1].ops[i])) });
    }
  } finally {
    for (const h of histories) await h.store.close();
  }

  const rows = small.map((s, i) => {
    const l = large[i];
    return {
      operation: s.op.label,
      [`p50 ms @${SMALL}`]: s.p50.toFixed(3),
      [`p99 ms @${SMALL}`]: s.p99.toFixed(3),
      [`p50 ms @${LARGE}`]: l.p50.toFixed(3),
      [`p99 ms @${LARGE}`]: l.p99.toFixed(3),
      "ratio p50": (l.p50 / s.p50).toFixed(2),
      "rows/op (s/l)": `${s.rowsPerOp.toFixed(0)}/${l.rowsPerOp.toFixed(0)}`,
      "n (s/l)": `${s.n}/${l.n}`,
    };
  });
  out(
    `\nPostgresStore latency against history (${ITERATIONS} iterations each, one connection; ratio = large / small p50)`,
  );
  // biome-ignore lint/suspicious/noConsole: the table is the bench's output
  console.table(rows);

  const { list: ops } = await operations(largeUrl, largeMain.organizationId, LARGE);
  const byKind = Object.fromEntries(ops.map((o) => [o.kind, o]));
  await explain(largeUrl, byKind.first.search(0), `plan: first page @${LARGE}`);
  await explain(largeUrl, byKind.deep.search(0), `plan: deep page @${LARGE}`);
  await explain(largeUrl, byKind.filtered.search(3), `plan: filtered page @${LARGE}`);

  const gated = rows.filter((_, i) => ["poll", "first"].includes(small[i].op.kind));
  const worst = Math.max(...gated.map((r) => Number(r["ratio p50"])));
  out(
    `\npoll / first-page worst p50 ratio ${worst.toFixed(2)} (flat is ~1; a scan would be ~${(LARGE / SMALL).toFixed(0)}); limit ${MAX_P50_RATIO}`,
  );
  if (worst > MAX_P50_RATIO) {
    process.stderr.write("FAIL: poll or the first search page grows with history (a scan?)\n");
    failed = true;
  }
} catch (err) {
  if (!interrupted) process.stderr.write(`search-pg bench failed: ${err?.stack ?? err}\n`);
  failed = true;
} finally {
  await destroy().catch((err) => process.stderr.write(`could not drop the bench databases: ${err}\n`));
  out(`total ${secondsSince(startedAll)} s`);
}
process.exit(interrupted ? 130 : failed ? 1 : 0);
