/**
 * Set-ups that parse but cannot work, or work only in part, found before refvid starts: in
 * production (NODE_ENV=production) an API process without an admin token, or a public URL that
 * clients cannot reach, stops the start with a message naming the variable; a store that cannot
 * scale out, or plain-http file URLs, start with a warning.
 */

import type { Config } from "./config.js";
import { isLoopbackHost } from "./net/loopback.js";

/** Start-up cannot go on; the message tells the operator what to change (printed without a stack). */
export class StartupError extends Error {}

export interface StartupFindings {
  /** Each stops the start (exit 2). */
  errors: string[];
  /** Each is logged and printed at start. */
  warnings: string[];
}

export function startupFindings(config: Config): StartupFindings {
  const errors: string[] = [];
  const warnings: string[] = [];
  if (!config.production) return { errors, warnings };

  if (config.role !== "worker" && config.adminTokens.length === 0) {
    errors.push(
      "REFVID_ADMIN_TOKEN is not set: in production an API process (role api or all) needs it, " +
        "because the admin API is the only way to create organizations and API keys (the demo is " +
        "not seeded in production). Set REFVID_ADMIN_TOKEN to a secret of at least 16 characters.",
    );
  }

  const url = new URL(config.publicUrl);
  if (isLoopbackHost(url.hostname)) {
    errors.push(
      `REFVID_PUBLIC_URL is ${config.publicUrl} (unset, it is http://localhost:PORT): a loopback ` +
        "address, so the file URLs handed to clients would point at their own machine. " +
        "Set REFVID_PUBLIC_URL to the address clients reach this server at, such as https://videos.example.com.",
    );
  } else if (url.protocol === "http:") {
    warnings.push(
      `REFVID_PUBLIC_URL is plain http (${config.publicUrl}): file URLs are bearer links; ` +
        "serve them over https (a TLS proxy in front of refvid) so they cannot be read on the way.",
    );
  }

  if (!config.metricsToken) {
    warnings.push(
      "GET /metrics is open to anyone who can reach this port (queue depths, tenants' run counts, " +
        "vendor names): set REFVID_METRICS_TOKEN and give it to the scraper as a bearer token.",
    );
  }

  if (config.store.kind === "pglite") {
    warnings.push(
      `embedded store (PGlite in ${config.store.dir}): one process only, no scale-out; set DATABASE_URL ` +
        "to a Postgres server for production.",
    );
  } else if (config.store.kind === "memory") {
    warnings.push(
      "memory store: everything is lost when the process stops; set DATABASE_URL for production.",
    );
  }
  return { errors, warnings };
}
