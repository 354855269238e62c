/**
 * What `npm start` prints once refvid serves: where (the origin it is reached at, with the port it
 * really listens on), the API reference, the console, the store and, with the demo, a curl to try
 * whose reference comes from the sample server (`npm run serve:samples`, on `SAMPLES_PORT`, 9001
 * by default; README, "Quick start").
 */
import type { Config } from "./config.js";

/** `scripts/serve-samples.mjs`'s port when `SAMPLES_PORT` is unset. */
export const DEFAULT_SAMPLES_PORT = 9001;

export interface BannerFacts {
  config: Pick<Config, "role" | "publicUrl" | "adminTokens" | "store">;
  /** The port the API (or a worker's probes) listens on, as bound: PORT=0 picks one. */
  port: number;
  /** REFVID_PROBE_PORT's server's port, when there is one. */
  probePort: number | null;
  /** The demo key, when the demo was seeded. */
  demoApiKey: string | null;
  /** `SAMPLES_PORT` as the environment has it, unchecked. */
  samplesPort: string | undefined;
}

/** The lines to print (without the blank lines around them). */
export function startupBanner(facts: BannerFacts): string[] {
  const { config } = facts;
  const store = describeStore(config.store);
  const base = servingOrigin(config.publicUrl, facts.port);
  const lines =
    config.role === "worker"
      ? [`refvid worker started (health probes on port ${facts.port})`, `  store: ${store}`]
      : [
          `refvid is serving on ${base} (role: ${config.role})`,
          `  API reference: ${base}/docs`,
          `  web console: ${base}/console`,
          `  store: ${store}`,
        ];
  if (facts.probePort !== null)
    lines.push(`  health probes and /metrics also on port ${facts.probePort} (REFVID_PROBE_PORT)`);
  if (config.role === "worker") return lines;
  if (facts.demoApiKey) {
    const samples = samplesPortOf(facts.samplesPort);
    const serve =
      samples === DEFAULT_SAMPLES_PORT
        ? "npm run serve:samples"
        : `SAMPLES_PORT=${samples} npm run serve:samples`;
    lines.push(
      `  demo API key (test: runs are billed on the run, never from the wallet): ${facts.demoApiKey}`,
      "",
      `  Try it with the sample references (serve them first: ${serve}):`,
      `    curl -s -X POST ${base}/v1/run/lab-d/model-d/reference-to-video \\`,
      `      -H "Authorization: Key ${facts.demoApiKey}" -H "Content-Type: application/json" \\`,
      `      -d '{"input": {"prompt": "A slow dolly shot", "image_urls": ["http://localhost:${samples}/sculpture.png"], "duration": "4s"}, "sync": true}'`,
    );
  }
  if (config.adminTokens.length === 0)
    lines.push(
      "",
      "  The admin API is off; set REFVID_ADMIN_TOKEN (or REFVID_ADMIN_TOKENS) to enable /admin/v1.",
    );
  return lines;
}

/**
 * The public URL, with the port refvid is listening on when the URL names port 0 (the default URL
 * of `PORT=0`, which asks the system for a free port).
 */
export function servingOrigin(publicUrl: string, port: number): string {
  const url = new URL(publicUrl);
  if (url.port !== "0") return publicUrl;
  url.port = String(port);
  return url.href.replace(/\/+$/, "");
}

/** The sample server's port: `SAMPLES_PORT` when it is one (as serve-samples.mjs reads it), else 9001. */
export function samplesPortOf(value: string | undefined): number {
  const port = Number(value);
  return value !== undefined && /^\d+$/.test(value.trim()) && port >= 1 && port <= 65535
    ? port
    : DEFAULT_SAMPLES_PORT;
}

/** The store in a few words, for the banner and `migrate`. */
export function describeStore(store: Config["store"]): string {
  switch (store.kind) {
    case "postgres":
      return store.listenUrl === store.url
        ? "Postgres (DATABASE_URL)"
        : "Postgres (DATABASE_URL; LISTEN on DATABASE_LISTEN_URL)";
    case "pglite":
      return `embedded PGlite in ${store.dir}`;
    case "memory":
      return "memory (nothing is kept after exit)";
  }
}
