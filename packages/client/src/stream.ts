/**
 * Following a run live over `GET /v1/runs/{run_id}/events` (server-sent events, parsed by
 * eventsource-parser): the run each time it changes, ending with the terminal run. A dropped
 * connection is resumed with `Last-Event-ID`; a server without the event stream is polled instead.
 */
import type { Run } from "@refvid/api-types";
import { createParser } from "eventsource-parser";
import { RefvidError, RunTimeoutError } from "./errors.js";
import { sleep } from "./retry.js";
import { isTerminal, type WaitOptions, waitForRun } from "./wait.js";

export interface StreamOptions {
  /** Aborting it ends the stream; the iteration then rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Resume after this event id (from an earlier stream): the run is sent again only if it changed. */
  lastEventId?: string;
  /** Reconnects in a row, after a dropped connection, before giving up. Default 5. */
  maxReconnects?: number;
  /** Polling interval when the server has no event stream (see {@link WaitOptions}). Default 1000 ms. */
  pollIntervalMs?: number;
}

/** Opens the event stream of a run: the raw response, its body not yet read. */
export type ConnectStream = (
  runId: string,
  lastEventId: string | undefined,
  signal: AbortSignal | undefined,
) => Promise<Response>;
/** Fetches the run once (for the polling fallback). */
export type FetchRun = (runId: string, signal: AbortSignal | undefined) => Promise<Run>;

const RECONNECT_DELAY_MS = 500;

/**
 * Yields the run as it stands, then each change of status or progress, and finally the terminal
 * run, after which the iteration ends. Breaking out of the loop closes the stream.
 *
 * @throws the API's typed error when the stream cannot be opened (a `NotFoundError` for an unknown run).
 */
export async function* streamRun(
  connect: ConnectStream,
  fetchRun: FetchRun,
  runId: string,
  options: StreamOptions = {},
): AsyncGenerator<Run, void, undefined> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let failures = 0;
  for (;;) {
    let response: Response;
    try {
      response = await connect(runId, lastEventId, signal);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      // An older server without the stream answers its generic 404 (or 405): poll instead.
      if (error instanceof RefvidError && (error.type === "not_found" || error.status === 405)) {
        yield* pollRun(fetchRun, runId, options);
        return;
      }
      if (error instanceof RefvidError || ++failures > (options.maxReconnects ?? 5)) throw error;
      await sleep(RECONNECT_DELAY_MS * failures, signal);
      continue;
    }
    const reader = response.body?.pipeThrough(new TextDecoderStream()).getReader();
    if (!reader) throw new TypeError("the run event stream has no body");
    const pending: Run[] = [];
    let done = false;
    const parser = createParser({
      onEvent(event) {
        if (event.event !== "run" && event.event !== "done") return;
        if (event.id !== undefined) lastEventId = event.id;
        pending.push(JSON.parse(event.data) as Run);
        if (event.event === "done") done = true;
      },
    });
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) break;
        parser.feed(chunk.value);
        for (let run = pending.shift(); run; run = pending.shift()) {
          failures = 0;
          yield run;
          if (isTerminal(run)) return;
        }
        if (done) return;
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (++failures > (options.maxReconnects ?? 5)) throw error;
    } finally {
      await reader.cancel().catch(() => {});
    }
    // The connection ended before the run did (a proxy, a server restart): resume where we were.
    await sleep(RECONNECT_DELAY_MS * Math.max(failures, 1), signal);
  }
}

/** The polling fallback, as an iteration of changes. */
async function* pollRun(fetchRun: FetchRun, runId: string, options: StreamOptions): AsyncGenerator<Run> {
  const updates: Run[] = [];
  let wake: () => void = () => {};
  let finished = false;
  let failure: unknown;
  const waiting = waitForRun(fetchRun, runId, {
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    onUpdate: (run) => {
      updates.push(run);
      wake();
    },
  }).then(
    () => {
      finished = true;
      wake();
    },
    (error: unknown) => {
      failure = error;
      finished = true;
      wake();
    },
  );
  for (;;) {
    for (let run = updates.shift(); run; run = updates.shift()) yield run;
    if (finished) {
      await waiting;
      if (failure !== undefined) throw failure;
      return;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
}

/**
 * Waits for the run's end over its stream, calling `onProgress` with each state; the terminal run.
 * `timeoutMs` bounds the whole wait, as in {@link WaitOptions}.
 */
export async function waitByStream(
  connect: ConnectStream,
  fetchRun: FetchRun,
  runId: string,
  options: Pick<WaitOptions, "signal" | "timeoutMs" | "pollIntervalMs"> & { onProgress: (run: Run) => void },
): Promise<Run> {
  const { timeoutMs } = options;
  const timeout = timeoutMs === undefined ? undefined : new AbortController();
  const timer = timeout && setTimeout(() => timeout.abort(new Error("timeout")), timeoutMs);
  const stopOnCaller = () => timeout?.abort(options.signal?.reason);
  options.signal?.addEventListener("abort", stopOnCaller, { once: true });
  const signal = timeout?.signal ?? options.signal;
  let last: Run | undefined;
  try {
    for await (const run of streamRun(connect, fetchRun, runId, {
      ...(signal ? { signal } : {}),
      ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    })) {
      last = run;
      options.onProgress(run);
    }
    if (!last || !isTerminal(last))
      throw new Error(`the event stream of run ${runId} ended before the run did`);
    return last;
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (timeout?.signal.aborted && timeoutMs !== undefined) throw new RunTimeoutError(runId, timeoutMs, last);
    throw error;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", stopOnCaller);
  }
}
