// The baseline of the hot-path bench: the stack refvid is built on, doing nothing else. Express 5
// with express-openapi-validator (default route lookup) over the same bundled spec, JSON bodies
// read as refvid reads them, and handlers that answer fixed bodies. What refvid adds (keys, the
// rate limit, the store, logging) is what the bench measures against it.
//
//   PORT=8081 node scripts/bench/hot-path/baseline-server.mjs
import { readFileSync } from "node:fs";
import express from "express";
import * as OpenApiValidator from "express-openapi-validator";

const spec = JSON.parse(
  readFileSync(new URL("../../../packages/api-types/src/generated/openapi.json", import.meta.url), "utf8"),
);
const now = "2026-11-24T12:00:00.000Z";
const run = {
  run_id: "run_00000000-0000-4000-8000-000000000000",
  environment: "live",
  endpoint: "lab-d/model-d/reference-to-video",
  model: "reference-to-video",
  capability: "video",
  mode: "reference-to-video",
  status: "queued",
  output: null,
  error: null,
  billing: null,
  metadata: {},
  progress: null,
  created_at: now,
  started_at: null,
  completed_at: null,
  elapsed_ms: null,
};
const account = {
  organization_id: "org_00000000000000000000000000000000",
  api_key_id: "key_00000000000000000000000000000000",
  environment: "live",
  identity: { organization_name: "bench", api_key_name: null, api_key_prefix: "sk-live-0000" },
  wallet: {
    balance_usd: "7000.00",
    reserved_usd: "0.00",
    available_usd: "7000.00",
    total_spent_usd: "0.00",
    lifetime_top_ups_usd: "7000.00",
    currency: "usd",
  },
  concurrency: { tier: "scale", limit: 100, in_flight: 0, available: 100 },
  rate_limit: { per_minute: 1000000, remaining: 999999, reset_seconds: 60 },
  api_key_concurrency: { limit: 1000, in_flight: 0, available: 100 },
};
const preview = {
  endpoint: "lab-d/model-d/reference-to-video",
  currency: "usd",
  unit_price: "0.071",
  billable_seconds: 4,
  amount: "0.284",
};

const app = express();
app.disable("x-powered-by");
app.use(express.json({ limit: 512 * 1024 }));
app.use(
  OpenApiValidator.middleware({
    apiSpec: spec,
    validateRequests: { allErrors: true },
    validateResponses: false,
    validateSecurity: false,
  }),
);
app.get("/v1/runs/:run_id", (_req, res) => {
  res.json(run);
});
app.get("/v1/account", (_req, res) => {
  res.json(account);
});
app.post("/v1/pricing/preview", (_req, res) => {
  res.status(201).json(preview);
});
app.post("/v1/run/:lab/:model/:category", (_req, res) => {
  res.setHeader("X-Concurrency-Remaining", "99");
  res.status(201).json(run);
});
app.use((err, _req, res, _next) => {
  res
    .status(err.status ?? 500)
    .json({ error: { type: "invalid_request", code: err.status ?? 500, message: err.message } });
});
const server = app.listen(Number(process.env.PORT ?? 8081), "127.0.0.1", () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
server.keepAliveTimeout = 65_000;
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => process.exit(0));
