/** `refvid ledger`: every change of the organization's wallet, newest first. */
import type { components } from "@refvid/api-types";
import type { Command } from "commander";
import { instant, positiveInteger } from "../args.js";
import { apiData } from "../errors.js";
import { table } from "../format.js";
import type { Output } from "../io.js";
import { session } from "../session.js";

type LedgerPage = components["schemas"]["LedgerPage"];
type LedgerEntry = components["schemas"]["LedgerEntry"];

export interface LedgerOptions {
  kind?: string;
  run?: string;
  key?: string;
  from?: string;
  to?: string;
  limit: number;
  all?: boolean;
}

/** The query `GET /v1/ledger` and `GET /admin/v1/ledger` share. */
export const ledgerQuery = (options: LedgerOptions) => ({
  kind: options.kind?.split(",") as LedgerEntry["kind"][] | undefined,
  run_id: options.run,
  api_key_id: options.key,
  from: options.from,
  to: options.to,
  limit: options.limit,
});

/** The options both ledger commands take. */
export const ledgerOptions = (cmd: Command) =>
  cmd
    .option(
      "--kind <kinds>",
      "only these kinds, comma-separated: top_up, reversal, adjustment, charge, reservation, release",
    )
    .option("--run <run_id>", "only this run's entries")
    .option("--key <api_key_id>", "only the entries of runs this key submitted")
    .option("--from <when>", "entries from: a date (2026-11-01) or an age (7d)", (v) => instant(v))
    .option("--to <when>", "entries before: a date or an age", (v) => instant(v))
    .option("--limit <n>", "entries a page (1-100)", positiveInteger, 20)
    .option("--all", "every page, not only the first");

/** Reads the pages (all of them with --all) and prints them as one table, or as JSON. */
export async function printLedger(
  io: Output,
  options: LedgerOptions,
  page: (cursor: string | undefined) => Promise<LedgerPage>,
): Promise<void> {
  const entries: LedgerEntry[] = [];
  let cursor: string | undefined;
  let more = false;
  do {
    const got = await page(cursor);
    entries.push(...got.data);
    cursor = got.next_cursor ?? undefined;
    more = got.has_more;
  } while (options.all && cursor);
  if (io.json)
    return io.printJson({ data: entries, has_more: more && !options.all, next_cursor: cursor ?? null });
  if (entries.length === 0) {
    io.print("No ledger entries.");
    return;
  }
  const rows = entries.map((e) => [
    e.created_at,
    e.kind,
    e.amount_usd.startsWith("-") ? io.c.red(e.amount_usd) : io.c.green(e.amount_usd),
    e.balance_usd,
    e.reserved_usd,
    e.run_id ?? e.top_up_id ?? "",
    [e.actor, e.reason].filter(Boolean).join(": "),
  ]);
  io.print(
    table(
      io.c,
      ["WHEN", "KIND", "AMOUNT USD", "BALANCE USD", "RESERVED USD", "RUN / TOP-UP", "BY, WHY"],
      rows,
    ),
  );
  if (more && !options.all)
    io.info(io.ce.dim("More entries follow: add --all, or narrow with --from/--kind."));
}

export function registerLedger(program: Command): void {
  ledgerOptions(
    program
      .command("ledger")
      .summary("every change of your wallet")
      .description(
        "Every change of the organization's wallet, newest first: top-ups, reversals, adjustments, and each " +
          "live run's reservation, charge and release. The balance is the sum of the balance entries, the " +
          "reserved amount the sum of reservations and releases.",
      ),
  ).action(async (options: LedgerOptions, command: Command) => {
    const { io, client } = await session(command);
    const api = client().api;
    await printLedger(io, options, (cursor) =>
      apiData(api.GET("/v1/ledger", { params: { query: { ...ledgerQuery(options), cursor } } })),
    );
  });
}
