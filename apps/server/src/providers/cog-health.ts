import { type Clock, type Scheduler, sleep, systemClock, systemScheduler } from "../clock.js";

import { redactSecret, vendorFetch } from "./upstream/vendor-http.js";

/** A container's readiness, from GET /health-check. */
export interface CogHealthReport {
  /** READY or BUSY: the container takes (or queues behind) predictions. */
  ok: boolean;
  /** Cog's status (STARTING, READY, BUSY, SETUP_FAILED, DEFUNCT, UNHEALTHY), or UNREACHABLE. */
  status: string;
  /** Why it is not ok: the setup's last log line, the user healthcheck's error, the call's error. */
  detail?: string;
  /** The Cog version, when the container reports one. */
  version?: string;
  /** The server is coglet (Cog ≥ 0.17, whose health-check names its version); Cog ≤ 0.16 names none. */
  coglet?: true;
  /** UNREACHABLE for want of an answer in time (the connection may be up). */
  unanswered?: true;
}

export interface CogHealthOptions {
  /** For messages; `cog` by default. */
  name?: string;
  token?: string | null;
  timeoutMs?: number;
  signal?: AbortSignal;
  scheduler?: Scheduler;
  clock?: Clock;
}

/** Asks a Cog container whether it is ready, once, within `timeoutMs` (5000 by default). */
export async function cogHealth(url: string, options: CogHealthOptions = {}): Promise<CogHealthReport> {
  const timeoutMs = options.timeoutMs ?? 5000;
  const clock = options.clock ?? systemClock;
  const signal = options.signal ?? new AbortController().signal;
  const inTime = AbortSignal.timeout(timeoutMs);
  let body: {
    status?: unknown;
    setup?: { status?: unknown; logs?: unknown };
    user_healthcheck_error?: unknown;
    version?: { cog?: unknown; coglet?: unknown };
  };
  try {
    const answer = await vendorFetch(
      {
        provider: options.name ?? "cog",
        baseUrl: url,
        authorization: options.token ? `Bearer ${options.token}` : null,
        scheduler: options.scheduler ?? systemScheduler,
        now: () => clock.now().getTime(),
        signal: AbortSignal.any([signal, inTime]),
        deadline: clock.now().getTime(),
        attemptTimeoutMs: timeoutMs + 1000,
      },
      { method: "GET", url: "health-check", once: true },
    );
    body = (answer.body ?? {}) as typeof body;
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (inTime.aborted)
      return { ok: false, status: "UNREACHABLE", detail: "no answer in time", unanswered: true };
    const detail = err instanceof Error ? redactSecret(err.message, options.token ?? null) : "unknown error";
    return { ok: false, status: "UNREACHABLE", detail };
  }
  const status = typeof body.status === "string" ? body.status : "UNKNOWN";
  const ok = status === "READY" || status === "BUSY";
  const version = body.version?.cog ?? body.version?.coglet;
  const setupLogs = typeof body.setup?.logs === "string" ? body.setup.logs.trim().split("\n") : [];
  const detail = ok
    ? undefined
    : typeof body.user_healthcheck_error === "string"
      ? body.user_healthcheck_error
      : body.setup?.status === "failed"
        ? setupLogs.at(-1)
        : undefined;
  return {
    ok,
    status,
    ...(detail ? { detail } : {}),
    ...(typeof version === "string" ? { version } : {}),
    ...(typeof body.version?.coglet === "string" ? { coglet: true as const } : {}),
  };
}

/**
 * Resolves once the box answers its health-check with anything but BUSY, or cannot be reached (a
 * box that went away runs nothing), asking every `pollMs`. No answer in time is busy: Cog 0.12
 * serves nothing while a held prediction runs.
 */
export async function untilFree(
  url: string,
  options: CogHealthOptions & { scheduler: Scheduler; pollMs: number },
): Promise<void> {
  for (;;) {
    const report = await cogHealth(url, options);
    if (report.status !== "BUSY" && !report.unanswered) return;
    await sleep(options.scheduler, options.pollMs);
  }
}
