#!/usr/bin/env node
/**
 * Entry point: parse the configuration, start refvid, print how to reach it, and shut down
 * gracefully on SIGINT/SIGTERM (stop accepting, drain runs in hand, close the store).
 */
import { ConfigError, loadConfig } from "./config.js";
import { startRefvid } from "./runtime.js";
import { seedDemo } from "./seed.js";

async function main() {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const refvid = await startRefvid(config, { host: process.env.HOST ?? "0.0.0.0" });
  const { logger } = refvid.deps;
  const base = config.publicUrl;
  const store =
    config.store.kind === "postgres"
      ? "Postgres (DATABASE_URL)"
      : config.store.kind === "pglite"
        ? `embedded PGlite in ${config.store.dir}`
        : "memory (nothing is kept after exit)";
  const lines = [`refvid is serving on ${base}`, `  API reference: ${base}/docs`, `  store: ${store}`];
  if (config.seedDemo) {
    const demo = await seedDemo(refvid.deps);
    lines.push(
      `  demo API key (test environment${demo.created ? ", 100.00 USD" : ""}): ${demo.apiKey}`,
      "",
      "  Try:",
      `    curl -s -X POST ${base}/v1/run/lab-d/model-d/reference-to-video \\`,
      `      -H "Authorization: Key ${demo.apiKey}" -H "Content-Type: application/json" \\`,
      `      -d '{"input": {"prompt": "A slow dolly shot", "image_urls": ["https://example.com/ref.png"], "duration": "4s"}}'`,
    );
  }
  if (!config.adminToken)
    lines.push("", "  The admin API is off; set REFVID_ADMIN_TOKEN to enable /admin/v1.");
  process.stdout.write(`\n${lines.join("\n")}\n\n`);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    await refvid.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

main().catch((err) => {
  process.stderr.write(`refvid failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
