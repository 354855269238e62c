/** `refvid runs get|cancel|list|watch|download`. */
import { isTerminal, type Run, type RunStatus, TERMINAL_STATUSES } from "@refvid/client";
import { type Command, InvalidArgumentError, Option } from "commander";
import { instant, keyValue, positiveInteger } from "../args.js";
import { saveVideo } from "../download.js";
import { EXIT_RUN_FAILED, UsageError } from "../errors.js";
import { runDetails, runOutcome, runRows, table, videoUrl } from "../format.js";
import { findModel, unknownModel } from "../model-flags.js";
import { follow } from "../progress.js";
import { session } from "../session.js";

const STATUSES: readonly RunStatus[] = ["queued", "processing", ...TERMINAL_STATUSES];

interface ListOptions {
  status?: RunStatus[];
  model?: string;
  since?: string;
  until?: string;
  metadata?: Record<string, string>;
  limit: number;
}

function statusList(value: string, previous: RunStatus[] | undefined): RunStatus[] {
  const statuses = value.split(",").map((s) => s.trim());
  const unknown = statuses.filter((s) => !STATUSES.includes(s as RunStatus));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`Use ${STATUSES.join(", ")}.`);
  }
  return [...new Set([...(previous ?? []), ...(statuses as RunStatus[])])];
}

export function registerRuns(program: Command): void {
  const runs = program
    .command("runs")
    .summary("look at, follow, cancel and download runs")
    .description("Look at your runs: one by id, a filtered list, a run followed live, its video.");

  runs
    .command("get")
    .description("Show a run as it stands now.")
    .argument("<run_id>", "the run's id (run_…)")
    .action(async (runId: string, _options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const run = await client().getRun(runId);
      if (io.json) return io.printJson(run);
      io.print(runDetails(io.c, run));
    });

  runs
    .command("cancel")
    .description("Cancel a queued or processing run (it is not charged). A run that already ended is a 409.")
    .argument("<run_id>", "the run's id")
    .action(async (runId: string, _options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const run = await client().cancelRun(runId);
      if (io.json) return io.printJson(run);
      io.print(`Cancelled ${run.run_id}.`);
      io.print(runDetails(io.c, run));
    });

  runs
    .command("list")
    .description("List your runs, newest first.")
    .addOption(
      new Option(
        "--status <status>",
        `keep runs in these statuses, comma-separated: ${STATUSES.join(", ")}`,
      ).argParser(statusList),
    )
    .option("--model <model>", "keep runs of this model (short name or slug)")
    .option(
      "--since <when>",
      "keep runs created at or after: a date (2026-05-01T12:00:00Z) or an age (2h, 7d)",
      (v) => instant(v),
    )
    .option("--until <when>", "keep runs created before: a date or an age", (v) => instant(v))
    .option(
      "--metadata <key=value>",
      "keep runs with this metadata pair (repeatable; all must match)",
      keyValue,
    )
    .option("--limit <n>", "show at most this many runs", positiveInteger, 20)
    .addHelpText(
      "after",
      "\nExample:\n  refvid runs list --status failed,timeout --since 1d --metadata order_id=ord_42",
    )
    .action(async (options: ListOptions, command: Command) => {
      const { io, client: connect } = await session(command);
      const client = connect();
      let endpoint: string | undefined = options.model;
      // A slug is searched as it is; any other word that names a model, as that model's slug.
      if (endpoint && endpoint.split("/").length !== 3) {
        const models = (await client.listModels()).data;
        const model = findModel(models, endpoint);
        if (!model) throw new UsageError(`--model: ${unknownModel(models, endpoint)}`);
        endpoint = model.slug;
      }
      const found: Run[] = [];
      const filters = {
        status: options.status,
        endpoint,
        created_after: options.since,
        created_before: options.until,
        metadata: options.metadata,
        limit: Math.min(options.limit, 100),
      };
      for await (const run of client.iterateRuns(filters)) {
        found.push(run);
        if (found.length >= options.limit) break;
      }
      if (io.json) return io.printJson(found);
      if (found.length === 0) return io.print("No runs match.");
      io.print(
        table(io.c, ["RUN", "MODEL", "STATUS", "CREATED (UTC)", "ELAPSED", "USD"], runRows(found, io.c)),
      );
    });

  runs
    .command("watch")
    .description("Follow a run live to its end, with a progress bar. Exit code 1 unless it succeeds.")
    .argument("<run_id>", "the run's id")
    .action(async (runId: string, _options: unknown, command: Command) => {
      const { io, client: connect } = await session(command);
      const client = connect();
      const run = await follow(client, runId, io);
      if (io.json) io.printJson(run);
      else {
        io.print(runOutcome(io.c, run));
        const url = videoUrl(run);
        if (url) io.print(url);
      }
      if (run.status !== "succeeded") process.exitCode = EXIT_RUN_FAILED;
    });

  runs
    .command("download")
    .description("Save a run's MP4, waiting for the run to end first if it is still in flight.")
    .argument("<run_id>", "the run's id")
    .argument("[file]", "where to save it (default: <run_id>.mp4)")
    .action(async (runId: string, file: string | undefined, _options: unknown, command: Command) => {
      const { io, client: connect } = await session(command);
      const client = connect();
      let run = await client.getRun(runId);
      if (!isTerminal(run)) run = await follow(client, runId, io, run);
      const saved = await saveVideo(run, file ?? true, io);
      if (io.json) io.printJson(saved ? { ...run, download: saved } : run);
    });
}
