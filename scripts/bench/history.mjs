// Cost that does not grow with history: times admission (+ its ending), poll, the account lookup
// and the first search page on a MemoryStore holding a small history (the baseline) and a large
// one, in the same process, and reports large/small ratios. Flat costs give ratios near 1.
//
//   npm run bench            (builds the store first)
//   BENCH_LARGE=1000000 npm run bench
import { createHash, randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { MemoryStore } from "@refvid/store";

const SMALL = Number(process.env.BENCH_SMALL ?? 1_000);
const LARGE = Number(process.env.BENCH_LARGE ?? 200_000);
const OPS = Number(process.env.BENCH_OPS ?? 5_000);
const T0 = Date.parse("2026-01-01T00:00:00Z");

async function tenantWithHistory(runs) {
  const store = new MemoryStore();
  const organizationId = `org_${randomUUID()}`;
  await store.createOrganization({
    id: organizationId,
    name: "bench",
    webhookSecret: "whsec_YmVuY2g=",
    now: new Date(T0),
  });
  const keyHash = createHash("sha256").update(organizationId).digest("hex");
  const apiKeyId = `key_${randomUUID()}`;
  await store.createApiKey({
    id: apiKeyId,
    organizationId,
    name: null,
    environment: "test",
    keyHash,
    keyPrefix: "sk-test-benc",
    maxConcurrency: 100,
    rateLimitPerMinute: 1e9,
    now: new Date(T0),
  });
  await store.addTopUp({ id: "top", organizationId, amount: 1e15, note: null, now: new Date(T0) });
  const tenant = { store, organizationId, apiKeyId, keyHash, clock: T0, ids: [] };
  for (let i = 0; i < runs; i++) await admitAndEnd(tenant, i % 7 === 0 ? "failed" : "succeeded");
  return tenant;
}

function newRun(tenant) {
  tenant.clock += 1;
  return {
    id: `run_${randomUUID()}`,
    organizationId: tenant.organizationId,
    apiKeyId: tenant.apiKeyId,
    endpoint: "lab-d/model-d/reference-to-video",
    input: { prompt: "bench" },
    webhookUrl: null,
    metadata: { batch: String(tenant.clock % 10) },
    unitPrice: 71_000,
    reservedSeconds: 4,
    reserved: 284_000,
    createdAt: new Date(tenant.clock),
  };
}

async function admitAndEnd(tenant, status = "succeeded") {
  const run = newRun(tenant);
  const now = run.createdAt;
  const admitted = await tenant.store.admitRun({ run, now });
  if (admitted.kind !== "admitted") throw new Error(`not admitted: ${admitted.kind}`);
  const outcome =
    status === "succeeded"
      ? {
          status,
          output: {
            fileId: "file_benchbench",
            fileName: "o.mp4",
            contentType: "video/mp4",
            durationSeconds: 4,
          },
          billableSeconds: 4,
          charged: 284_000,
        }
      : { status, error: { type: "provider_error", code: 502, message: "x" } };
  await tenant.store.completeRun({ runId: run.id, outcome, now });
  tenant.ids.push(run.id);
}

async function measure(label, fn) {
  for (let i = 0; i < Math.min(500, OPS); i++) await fn(i); // warm up
  const start = performance.now();
  for (let i = 0; i < OPS; i++) await fn(i);
  return { label, usPerOp: ((performance.now() - start) * 1000) / OPS };
}

async function suite(tenant) {
  const pick = (i) => tenant.ids[(i * 7919) % tenant.ids.length];
  return [
    await measure("admit + end a run", () => admitAndEnd(tenant)),
    await measure("poll a run (getRun)", (i) => tenant.store.getRun(tenant.organizationId, pick(i))),
    await measure("account (key lookup)", () => tenant.store.findApiKeyByHash(tenant.keyHash)),
    await measure("search, first page of 20", () =>
      tenant.store.searchRuns({ organizationId: tenant.organizationId, environment: "test", limit: 21 }),
    ),
    await measure("search, filtered page of 20", () =>
      tenant.store.searchRuns({
        organizationId: tenant.organizationId,
        environment: "test",
        limit: 21,
        metadata: { batch: "3" },
        statuses: ["succeeded"],
      }),
    ),
  ];
}

const small = await suite(await tenantWithHistory(SMALL));
const large = await suite(await tenantWithHistory(LARGE));
const rows = small.map((s, i) => {
  const l = large[i];
  return {
    operation: s.label,
    [`µs/op @${SMALL}`]: s.usPerOp.toFixed(2),
    [`µs/op @${LARGE}`]: l.usPerOp.toFixed(2),
    ratio: (l.usPerOp / s.usPerOp).toFixed(2),
  };
});
process.stdout.write(`MemoryStore cost against history (${OPS} ops each; ratio = large / small history)\n`);
console.table(rows);
const worst = Math.max(...rows.map((r) => Number(r.ratio)));
process.stdout.write(
  `worst ratio ${worst.toFixed(2)} (flat is 1.00; a scan over history would be ~${(LARGE / SMALL).toFixed(0)})\n`,
);
if (worst > 3) {
  process.stderr.write("FAIL: an operation's cost grows with history\n");
  process.exit(1);
}
