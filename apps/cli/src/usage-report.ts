/**
 * A usage report on the command line, the organization's (`refvid usage`) and the operators'
 * (`refvid admin usage`): the options that pick it, and its table.
 */
import type { components } from "@refvid/api-types";
import { type Command, Option } from "commander";
import { instant } from "./args.js";
import { table } from "./format.js";
import type { Output } from "./io.js";

type Group = components["schemas"]["AccountUsageGroup"];

interface Report<G extends Group> {
  from: string;
  to: string;
  group_by: string;
  data: G[];
}

/** `--group-by` (one of `groupings`, `fallback` unless given), `--from` and `--to`. */
export function usageOptions(command: Command, groupings: readonly string[], fallback: string): Command {
  return command
    .addOption(new Option("--group-by <group>", "what a row is").choices(groupings).default(fallback))
    .option(
      "--from <when>",
      "start of the window: a date (2026-05-01) or an age (7d); default 30 days before --to",
      (v) => instant(v),
    )
    .option("--to <when>", "end of the window, exclusive: a date or an age; default now", (v) => instant(v));
}

/** A row per group and environment, money in USD. `scope` says whose runs these are; `more` are columns after the organization's figures. */
export function showUsage<G extends Group>(
  io: Output,
  report: Report<G>,
  scope: string,
  more: [head: string, cell: (group: G) => string][] = [],
): void {
  io.print(
    io.c.dim(
      `Runs created from ${report.from} to ${report.to} (exclusive), ${scope}, by ${report.group_by}.`,
    ),
  );
  if (report.data.length === 0) {
    io.print("No runs in this window.");
    return;
  }
  const rows = report.data.map((g) => [
    g.group,
    g.environment,
    g.runs.total,
    g.runs.succeeded,
    g.failures,
    g.billed_seconds,
    g.spend_usd,
    g.priced_usd,
    ...more.map(([, cell]) => cell(g)),
  ]);
  const head = [
    "ENV",
    "RUNS",
    "OK",
    "FAILURES",
    "SECONDS",
    "SPEND USD",
    "PRICED USD",
    ...more.map(([h]) => h),
  ];
  io.print(table(io.c, [report.group_by.toUpperCase(), ...head], rows));
}
