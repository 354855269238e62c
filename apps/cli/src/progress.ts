/**
 * Following a run to its end over its live event stream: a progress bar (cli-progress) on a
 * terminal, one plain line per change of status or progress otherwise (and nothing with `--json`
 * off a terminal), all on stderr.
 */
import { isTerminal, type RefvidClient, type Run } from "@refvid/client";
import { EXIT_INTERRUPTED } from "./errors.js";
import { colorStatus } from "./format.js";
import type { Output } from "./io.js";

interface Display {
  update(run: Run): void;
  stop(): void;
}

/** When a clock time is: `14:05:09`, local. */
const clock = (iso: string) => new Date(iso).toLocaleTimeString([], { hour12: false });

/**
 * Where the run stands in a queue: refvid's while queued (with its estimated start), its vendor's
 * while processing, when the vendor says.
 */
function queued(run: Run): string {
  const position = run.queue_position;
  if (typeof position !== "number") return "";
  if (run.status === "processing") return ` · ${position} ahead in the vendor's queue`;
  const start = run.estimated_start_at;
  return ` · ${position} ahead${start ? ` · starts ~${clock(start.p50)} (by ${clock(start.p90)})` : ""}`;
}

function percent(run: Run): number {
  if (run.status === "succeeded") return 100;
  return Math.round((run.progress ?? 0) * 100);
}

async function bar(io: Output): Promise<Display> {
  const { default: cliProgress } = await import("cli-progress"); // loaded only on a terminal
  const b = new cliProgress.SingleBar(
    {
      format: `{bar} {percentage}% | {status} | {duration_formatted}`,
      stream: process.stderr,
      hideCursor: true,
      barsize: 30,
      formatValue: (value, _options, type) =>
        type === "percentage" ? String(value).padStart(3) : String(value),
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(run) {
      const payload = { status: `${colorStatus(io.ce, run.status)}${queued(run)}` };
      if (!started) b.start(100, percent(run), payload);
      else b.update(percent(run), payload);
      started = true;
    },
    stop: () => started && b.stop(),
  };
}

/** The plain line a change of the run prints off a terminal. */
export function statusLine(run: Run): string {
  const done = run.status === "processing" || run.status === "succeeded" ? ` ${percent(run)}%` : "";
  return `${run.run_id} ${run.status}${done}${queued(run)}`;
}

function lines(io: Output): Display {
  let last = "";
  return {
    update(run) {
      const line = statusLine(run);
      if (line !== last) io.info(line);
      last = line;
    },
    stop() {},
  };
}

function silent(): Display {
  return { update() {}, stop() {} };
}

/**
 * Follows the run until it ends and returns the terminal run. Ctrl-C stops following (the run
 * goes on upstream) after saying how to come back to it.
 */
export async function follow(client: RefvidClient, runId: string, io: Output, initial?: Run): Promise<Run> {
  const display = io.stderrIsTTY ? await bar(io) : io.json ? silent() : lines(io);
  const onSignal = () => {
    display.stop();
    io.info(`\nStopped following; the run goes on. Follow it again: refvid runs watch ${runId}`);
    process.exit(EXIT_INTERRUPTED);
  };
  process.once("SIGINT", onSignal);
  let last = initial;
  try {
    if (initial) display.update(initial);
    if (initial && isTerminal(initial)) return initial;
    for await (const run of client.streamRun(runId)) {
      last = run;
      display.update(run);
    }
  } finally {
    display.stop();
    process.off("SIGINT", onSignal);
  }
  if (!last || !isTerminal(last)) throw new Error(`the event stream of ${runId} ended before the run did`);
  return last;
}
