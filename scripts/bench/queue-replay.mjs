// Is the queue fair, and are its estimates calibrated? Replays a mixed workload on a manual clock through the
// real code: MemoryStore's fair queue and duration window, and the server's `queueStanding` (the
// position and `estimated_start_at` a client reads). Twenty organizations submit runs of two
// models, each behind its own capped provider, at random times (one of them in bursts), with
// durations drawn from each model's distribution; every free slot is filled by `claimRuns` as a
// worker would. Each run's estimate is read when it is admitted and, again, halfway through its
// wait; when it starts, the bench notes whether it started before the p50 and the p90 estimate.
//
//   npm run bench           (builds the store and server first)
//   BENCH_QUEUE_HOURS=24 node scripts/bench/queue-replay.mjs   (also BENCH_QUEUE_SEED)
//
// Fairness first, in the scenario of a heavy backlog: one organization queues 100 runs (the
// highest organization cap) behind a provider that runs two at once, then ten others queue 5
// each; the bench prints where each light organization's first run started and the heavy one's
// share of the starts after.
//
// Targets, over the estimates of runs that waited (a run that starts at once is trivially on
// time): 40-60 % start before their p50 estimate, at least 85 % before their p90. Exits 1 when a
// target is missed.
import { createHash } from "node:crypto";
import { MemoryStore } from "@refvid/store";
import { queueStanding } from "../../apps/server/dist/services/queue-standing.js";

const HOURS = Number(process.env.BENCH_QUEUE_HOURS ?? 12);
let seed = Number(process.env.BENCH_QUEUE_SEED ?? 20261126);
const T0 = Date.parse("2026-11-26T00:00:00Z");
const WORKER_SLOTS = 16;

/** Two models, each behind its own provider: capacity, and durations (lognormal, ms). */
const MODELS = [
  { slug: "lab-a/model-a/reference-to-video", slot: "fal", capacity: 4, medianMs: 60_000, sigma: 0.35 },
  { slug: "lab-d/model-d/reference-to-video", slot: "cog", capacity: 2, medianMs: 150_000, sigma: 0.25 },
];

/** A small, seeded generator (mulberry32), so a run of the bench can be repeated exactly. */
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const normal = () => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
const duration = (model) => Math.round(model.medianMs * Math.exp(model.sigma * normal()));
const exponential = (meanMs) => -Math.log(1 - random()) * meanMs;

const store = new MemoryStore();
let now = T0;
const clock = { now: () => new Date(now) };
const catalog = {
  current: {
    find: (slug) => {
      const model = MODELS.find((m) => m.slug === slug);
      return (
        model && {
          routes: [{ name: model.slot, slot: model.slot, maxConcurrency: model.capacity, vendor: true }],
        }
      );
    },
  },
};
const deps = { store, catalog, clock, config: { workerConcurrency: WORKER_SLOTS } };

async function organization(i, into = store) {
  const id = `org_${String(i).padStart(4, "0")}`;
  await into.createOrganization({
    id,
    name: id,
    webhookSecrets: { live: "whsec_YQ==", test: "whsec_Yg==" },
    now: clock.now(),
  });
  await into.addTopUp({
    id: `top_${i}`,
    organizationId: id,
    amount: 7_000_000_000,
    note: null,
    now: clock.now(),
  });
  const apiKeyId = `key_${i}`;
  await into.createApiKey({
    id: apiKeyId,
    organizationId: id,
    name: null,
    environment: "live",
    keyHash: createHash("sha256").update(id).digest("hex"),
    keyPrefix: "sk-live-bench",
    maxConcurrency: 100,
    rateLimitPerMinute: 1e9,
    now: clock.now(),
  });
  return { id, apiKeyId };
}

const out = (s = "") => process.stdout.write(`${s}\n`);
const newRun = (id, org, endpoint) => ({
  id,
  organizationId: org.id,
  apiKeyId: org.apiKeyId,
  endpoint,
  input: { prompt: "bench" },
  webhookUrl: null,
  metadata: {},
  priceUnit: "second",
  unitPrice: 1,
  reservedSeconds: 5,
  reserved: 5,
  createdAt: clock.now(),
});
const success = (route) => ({
  status: "succeeded",
  output: { fileId: "f", fileName: "v.mp4", contentType: "video/mp4", durationSeconds: 5 },
  billableSeconds: 5,
  charged: 0,
  route,
});

/** The heavy-backlog scenario on a store of its own: who starts when, runs of 60 s, two at a time. */
async function fairness() {
  const fair = new MemoryStore();
  const [heavy, ...lights] = await Promise.all(
    Array.from({ length: 11 }, (_, i) => organization(100 + i, fair)),
  );
  const endpoint = MODELS[0].slug;
  const running = [];
  const starts = [];
  const claim = async () => {
    while (running.length < 2) {
      const [run] = await fair.claimRuns({ workerId: "w", limit: 1, leaseMs: 3_600_000, now: clock.now() });
      if (!run) return;
      running.push({ id: run.id, endsAt: now + 60_000 });
      starts.push(run.organizationId);
    }
  };
  for (let i = 0; i < 100; i++)
    await fair.admitRun({ run: newRun(`fair_h${i}`, heavy, endpoint), now: clock.now() });
  await claim();
  const before = starts.length;
  now += 1000;
  for (const [o, light] of lights.entries()) {
    for (let i = 0; i < 5; i++)
      await fair.admitRun({ run: newRun(`fair_${o}_${i}`, light, endpoint), now: clock.now() });
  }
  while (starts.length < before + 55) {
    running.sort((a, b) => a.endsAt - b.endsAt);
    const ended = running.shift();
    now = ended.endsAt;
    await fair.completeRun({ runId: ended.id, outcome: success("fal"), now: clock.now() });
    await claim();
  }
  const after = starts.slice(before);
  const heavyFourth = after.map((o, i) => (o === heavy.id ? i : -1)).filter((i) => i >= 0)[3];
  const lightFirsts = lights.map((l) => after.indexOf(l.id));
  const heavyShare = after.filter((o) => o === heavy.id).length;
  out("fairness: 100 runs of one organization queued, then 5 of each of ten others; two run at once");
  out(
    `  every light organization's first run was among the first ${Math.max(...lightFirsts) + 1} starts; heavy's 4th was start ${heavyFourth + 1}`,
  );
  out(
    `  heavy got ${heavyShare} of the ${after.length} starts after the others arrived (an equal share: ${(after.length / 11).toFixed(1)})`,
  );
  out(`  first come, first served would have started every light run after heavy's 98 waiting ones`);
  if (Math.max(...lightFirsts) > heavyFourth || heavyShare < after.length / 11 - 1) {
    out("  FAILED: the queue is not fair");
    process.exitCode = 1;
  }
  now = T0;
}
await fairness();

// Twenty organizations; org 0 submits in bursts of 30, the rest one at a time. Offered load is
// about 95 % of each provider's capacity, so queues form and drain.
const orgs = await Promise.all(Array.from({ length: 20 }, (_, i) => organization(i)));
const events = []; // { at, kind: "submit" | "end", ... }
const horizon = T0 + HOURS * 3_600_000;
for (const model of MODELS) {
  const capacityPerMs = model.capacity / (model.medianMs * Math.exp(model.sigma ** 2 / 2));
  const burstShare = 0.3;
  const steadyMeanGap = 1 / (capacityPerMs * 0.95 * (1 - burstShare));
  for (let at = T0 + exponential(steadyMeanGap); at < horizon; at += exponential(steadyMeanGap)) {
    events.push({ at, kind: "submit", org: orgs[1 + Math.floor(random() * 19)], model });
  }
  const burstMeanGap = 30 / (capacityPerMs * 0.95 * burstShare);
  for (let at = T0 + exponential(burstMeanGap); at < horizon; at += exponential(burstMeanGap)) {
    for (let i = 0; i < 30; i++) events.push({ at: at + i, kind: "submit", org: orgs[0], model });
  }
}

const runs = new Map(); // id -> { model, estimates: [{p50, p90}], startedAt }
const running = new Map(); // slot -> count
const ends = [];
let sequence = 0;

async function estimate(id) {
  const run = await store.getRunById(id);
  const standing = run && (await queueStanding(deps, run));
  if (standing?.estimate) runs.get(id).estimates.push(standing.estimate.start);
}

async function fill() {
  for (;;) {
    const full = MODELS.filter((m) => (running.get(m.slot) ?? 0) >= m.capacity).map((m) => m.slug);
    const [run] = await store.claimRuns({
      workerId: "w",
      limit: 1,
      leaseMs: 3_600_000,
      now: clock.now(),
      skipEndpoints: full,
    });
    if (!run) return;
    const model = MODELS.find((m) => m.slug === run.endpoint);
    running.set(model.slot, (running.get(model.slot) ?? 0) + 1);
    await store.acquireProvider({
      runId: run.id,
      workerId: "w",
      provider: model.slot,
      limit: model.capacity,
    });
    runs.get(run.id).startedAt = now;
    ends.push({ at: now + duration(model), id: run.id, model });
  }
}

events.sort((a, b) => a.at - b.at);
const midpoints = []; // { at, id }: a second estimate halfway through the first estimated wait
let admitted = 0;
let refused = 0;
for (let e = 0; e < events.length || ends.length > 0 || midpoints.length > 0; ) {
  ends.sort((a, b) => a.at - b.at);
  midpoints.sort((a, b) => a.at - b.at);
  const next = Math.min(events[e]?.at ?? Infinity, ends[0]?.at ?? Infinity, midpoints[0]?.at ?? Infinity);
  if (next === Infinity) break;
  now = Math.round(next);
  if (ends[0] && ends[0].at <= next) {
    const end = ends.shift();
    running.set(end.model.slot, running.get(end.model.slot) - 1);
    await store.completeRun({ runId: end.id, outcome: success(end.model.slot), now: clock.now() });
  } else if (midpoints[0] && midpoints[0].at <= next) {
    const { id } = midpoints.shift();
    if (runs.get(id).startedAt === undefined) await estimate(id);
  } else {
    const { org, model } = events[e++];
    const id = `run_${String(++sequence).padStart(8, "0")}`;
    const result = await store.admitRun({ run: newRun(id, org, model.slug), now: clock.now() });
    if (result.kind !== "admitted") {
      refused++;
      continue;
    }
    admitted++;
    runs.set(id, { model, estimates: [], admittedAt: now, org: org.id });
    await estimate(id);
    const first = runs.get(id).estimates[0];
    if (first) midpoints.push({ at: (now + Date.parse(first.p50.toISOString())) / 2, id });
  }
  await fill();
}

const judged = [...runs.values()].flatMap((run) =>
  run.startedAt === undefined ? [] : run.estimates.map((est) => ({ run, est })),
);
const waited = judged.filter(({ run }) => run.startedAt > run.admittedAt);
const share = (list, q) =>
  list.filter(({ run, est }) => run.startedAt <= est[q].getTime()).length / list.length;
const pct = (x) => `${(100 * x).toFixed(1)} %`;
out(
  `queue estimates: ${HOURS} h of traffic, ${admitted} runs (${refused} refused at a cap), ${judged.length} estimates`,
);
out(
  `  every estimate:          before p50 ${pct(share(judged, "p50"))}, before p90 ${pct(share(judged, "p90"))}`,
);
out(
  `  runs that waited (${waited.length}): before p50 ${pct(share(waited, "p50"))} (target 40-60 %), before p90 ${pct(share(waited, "p90"))} (target >= 85 %)`,
);
const bursty = waited.filter(({ run }) => run.org === orgs[0].id);
const steady = waited.filter(({ run }) => run.org !== orgs[0].id);
out(
  `    the bursty organization: before p50 ${pct(share(bursty, "p50"))}, before p90 ${pct(share(bursty, "p90"))}`,
);
out(
  `    the other nineteen:      before p50 ${pct(share(steady, "p50"))}, before p90 ${pct(share(steady, "p90"))}`,
);
const p50 = share(waited, "p50");
const p90 = share(waited, "p90");
if (p50 < 0.4 || p50 > 0.6 || p90 < 0.85) {
  out("  FAILED: estimates are not calibrated");
  process.exitCode = 1;
}
