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
// The spec's own examples, answered as they are: the same shapes and sizes refvid answers with.
const example = (name) => spec.components.examples[name].value;
const run = example("RunQueuedModelD");
const account = example("Account");
const preview = example("PricePreview");

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
