#!/usr/bin/env node
/**
 * Entry point: parse the configuration, start refvid, print how to reach it, and shut down
 * gracefully on SIGINT/SIGTERM (stop accepting, drain held requests and runs in hand, close the store).
 */
import type { AddressInfo } from "node:net";
import v8 from "node:v8";
import { describeStore, startupBanner } from "./banner.js";
import { type Config, ConfigError, loadConfig } from "./config.js";
import { S3BlobStore } from "./files/s3-blob-store.js";
import { openStore } from "./open-store.js";
import { startRefvid, stopDeadlineMs } from "./runtime.js";
import { seedDemo } from "./seed.js";
import { reloadCatalog } from "./services/catalog.js";
import { StartupError, startupFindings } from "./startup-checks.js";

/**
 * Under a burst (thousands of sync submits arriving at once), each request lives long enough for
 * its garbage to reach the old generation, and V8's default growth lets the heap double or more
 * before it collects. Growing it by a quarter at most keeps the peak RSS of 10,000 held submits
 * at about +150-170 MiB (+165-200 MiB at a half), at no measured cost in throughput
 * (docs/decisions.md, "Hot path"). A flag given on the command line wins.
 */
const HEAP_GROWING_PERCENT = 25;

async function main() {
  if (!process.execArgv.some((arg) => arg.startsWith("--heap-growing-percent")))
    v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
  let config: Config;
  try {
    config = loadConfig(withArguments(process.argv.slice(2), process.env));
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (process.argv[2] === "migrate") {
    const store = await openStore(config.store); // opening a Postgres store migrates it
    await store.close();
    process.stdout.write(`migrations applied (${describeStore(config.store)})\n`);
    if (config.blobStore.kind === "s3") {
      const { bucket } = config.blobStore.location;
      const s3 = new S3BlobStore(config.blobStore.location);
      const made = await s3.ensureBucket().finally(() => s3.client.destroy());
      process.stdout.write(`bucket ${bucket} ${made ? "created" : "exists"}\n`);
    }
    return;
  }
  const findings = startupFindings(config);
  if (findings.errors.length > 0) {
    process.stderr.write(`refvid cannot start:\n${findings.errors.map((e) => `  - ${e}\n`).join("")}`);
    process.exit(2);
  }
  // SIGHUP reads the catalog file again (a bad one is logged, the catalog in service stays). It is
  // taken from the start: Node's default for SIGHUP ends the process, and /readyz answers before
  // start-up has returned.
  let reload = () => {};
  process.on("SIGHUP", () => reload());
  const refvid = await startRefvid(config, { host: process.env.HOST ?? "0.0.0.0" });
  const { logger } = refvid.deps;
  reload = () => {
    try {
      reloadCatalog(refvid.deps);
    } catch {}
  };
  for (const warning of findings.warnings) {
    logger.warn(warning);
    process.stderr.write(`warning: ${warning}\n`);
  }
  const demo = config.seedDemo && config.role !== "worker" ? await seedDemo(refvid.deps) : null;
  const lines = startupBanner({
    config,
    port: (refvid.server.address() as AddressInfo).port,
    probePort: refvid.probeServer ? (refvid.probeServer.address() as AddressInfo).port : null,
    demoApiKey: demo?.apiKey ?? null,
    samplesPort: process.env.SAMPLES_PORT,
  });
  process.stdout.write(`\n${lines.join("\n")}\n\n`);

  // The first signal drains (docs/decisions.md, "Shutdown"); a second cuts the drain short, and
  // held requests are answered at once with their runs as they stand.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      logger.info({ signal }, "answering held requests now");
      refvid.drain.hurry();
      return;
    }
    stopping = true;
    logger.info({ signal, drainMs: config.drainMs, held: refvid.drain.size }, "shutting down");
    const force = setTimeout(() => process.exit(1), stopDeadlineMs(config));
    force.unref();
    await refvid.close();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

/** `--role api|worker|all` overrides REFVID_ROLE; `migrate` applies migrations, creates the bucket, and exits. */
function withArguments(args: string[], env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  const merged: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === "--role") merged.REFVID_ROLE = args[++i];
    else if (arg.startsWith("--role=")) merged.REFVID_ROLE = arg.slice("--role=".length);
  }
  return merged;
}

main().catch((err) => {
  if (err instanceof StartupError) {
    process.stderr.write(`refvid cannot start: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`refvid failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
