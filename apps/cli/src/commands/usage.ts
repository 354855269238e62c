/** `refvid usage`: the organization's runs, seconds, spend and test prices by day, model or key. */
import type { components } from "@refvid/api-types";
import type { Command } from "commander";
import { apiData, UsageError } from "../errors.js";
import { session } from "../session.js";
import { showUsage, usageOptions } from "../usage-report.js";

type GroupBy = components["schemas"]["AccountUsageGroupBy"];

/** What the organization's usage groups by, as the API takes it. */
const GROUP_BY: readonly GroupBy[] = ["day", "model", "api_key"];

interface UsageOptions {
  groupBy: GroupBy;
  from?: string;
  to?: string;
  csv?: boolean;
}

export function registerUsage(program: Command): void {
  usageOptions(
    program
      .command("usage")
      .summary("your organization's runs, seconds and spend by day, model or key")
      .description(
        "What the runs of your key's organization created in a window did and cost, live and test, by " +
          "group and environment (GET /v1/usage): runs, failures, billed seconds, what the wallet paid " +
          "(live runs) and what the runs were priced at (for test runs, what they would have cost).",
      ),
    GROUP_BY,
    "day",
  )
    .option("--csv", "print the report as the server's CSV: a header row, then a line per row")
    .action(async (options: UsageOptions, command: Command) => {
      const { io, client } = await session(command);
      if (options.csv && io.json) throw new UsageError("--csv and --json each print the report: pass one");
      const query = { group_by: options.groupBy, from: options.from, to: options.to };
      if (options.csv) {
        const csv = client().api.GET("/v1/usage", {
          params: { query },
          headers: { accept: "text/csv" },
          parseAs: "text",
        });
        io.write(await apiData(csv));
        return;
      }
      const report = await apiData(client().api.GET("/v1/usage", { params: { query } }));
      // The operation also answers CSV, so its type says so; without `Accept: text/csv` it is JSON.
      if (typeof report === "string") throw new Error(`GET /v1/usage answered text, not JSON: ${report}`);
      if (io.json) return io.printJson(report);
      showUsage(io, report, `organization ${report.organization_id}, live and test`);
    });
}
