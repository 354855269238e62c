/**
 * `refvid admin top-up | reverse-top-up | adjust | ledger | audit`: an organization's money over the
 * admin API. Each change is a ledger entry, recorded in the audit log with the admin token's name.
 */
import type { components } from "@refvid/api-types";
import { type Command, InvalidArgumentError } from "commander";
import { positiveInteger } from "../args.js";
import { apiData } from "../errors.js";
import { details, table } from "../format.js";
import type { Output } from "../io.js";
import { session } from "../session.js";
import { type LedgerOptions, ledgerOptions, ledgerQuery, printLedger } from "./ledger.js";

type Organization = components["schemas"]["Organization"];
type Correction = components["schemas"]["Correction"];

/** A decimal USD amount, signed when `signed`. */
export const amount =
  (signed = false) =>
  (value: string): string => {
    if (!(signed ? /^-?[0-9]{1,9}(\.[0-9]{1,6})?$/ : /^[0-9]{1,9}(\.[0-9]{1,6})?$/).test(value))
      throw new InvalidArgumentError(
        signed ? "Use a decimal amount like 12.50 or -12.50." : "Use a decimal amount like 100.00.",
      );
    return value;
  };

export function showOrganization(io: Output, org: Organization): void {
  const w = org.wallet;
  io.print(
    details(io.c, [
      ["organization", org.organization_id],
      ["name", org.name],
      ["tier", `${org.tier} (${org.concurrency_limit} runs at once)`],
      ["balance", `${w.balance_usd} USD (${w.available_usd} available, ${w.reserved_usd} reserved)`],
      ["topped up", `${w.lifetime_top_ups_usd} USD`],
      ["queue weight", org.queue_weight],
      ["created", org.created_at],
    ]),
  );
}

function showCorrection(io: Output, made: Correction): void {
  const e = made.ledger_entry;
  io.print(`${e.kind === "reversal" ? "Reversed" : "Adjusted"} ${e.amount_usd} USD (${e.ledger_entry_id}).`);
  showOrganization(io, made.organization);
}

export function registerAdminMoney(admin: Command): void {
  admin
    .command("top-up")
    .description("Add funds to an organization's wallet; lifetime top-ups set its tier.")
    .argument("<organization_id>", "org_…")
    .argument("<amount_usd>", "the amount in USD, e.g. 100.00", amount())
    .option("--note <text>", "kept with the top-up, e.g. a payment reference")
    .option(
      "--idempotency-key <key>",
      "makes the top-up once, however often it is sent (a payment reference)",
    )
    .action(
      async (
        id: string,
        amountUsd: string,
        options: { note?: string; idempotencyKey?: string },
        command: Command,
      ) => {
        const { io, admin } = await session(command);
        const header = options.idempotencyKey ? { "Idempotency-Key": options.idempotencyKey } : {};
        const {
          data: topUp,
          error,
          response,
        } = await admin().api.POST("/admin/v1/organizations/{organization_id}/top-ups", {
          params: { path: { organization_id: id }, header },
          body: { amount_usd: amountUsd, note: options.note },
        });
        const made = await apiData(Promise.resolve({ data: topUp, error, response }));
        if (io.json) return io.printJson(made);
        const replayed = response.headers.get("idempotent-replayed") === "true";
        io.print(
          replayed
            ? `Already made with this Idempotency-Key: ${made.amount_usd} USD (${made.top_up_id}); nothing added.`
            : `Added ${made.amount_usd} USD (${made.top_up_id}).`,
        );
        showOrganization(io, made.organization);
      },
    );

  admin
    .command("reverse-top-up")
    .description(
      "Take a top-up back, with a reason: a reversal entry in the ledger. Refused when the wallet's available " +
        "balance cannot cover it, or when it was reversed already.",
    )
    .argument("<organization_id>", "org_…")
    .argument("<top_up_id>", "top_…")
    .requiredOption("--reason <text>", "why; kept in the ledger and the audit log")
    .action(async (org: string, topUp: string, options: { reason: string }, command: Command) => {
      const { io, admin } = await session(command);
      const made = await apiData(
        admin().api.POST("/admin/v1/organizations/{organization_id}/top-ups/{top_up_id}/reversal", {
          params: { path: { organization_id: org, top_up_id: topUp } },
          body: { reason: options.reason },
        }),
      );
      if (io.json) return io.printJson(made);
      showCorrection(io, made);
    });

  admin
    .command("adjust")
    .description(
      "Correct a wallet's balance by an amount (negative takes away), with a reason: an adjustment entry " +
        "in the ledger. It never takes the available balance below 0.",
    )
    .argument("<organization_id>", "org_…")
    .argument(
      "<amount_usd>",
      "e.g. 12.50, or -12.50 after -- (options first: adjust <org> --reason … -- -12.50)",
      amount(true),
    )
    .requiredOption("--reason <text>", "why; kept in the ledger and the audit log")
    .action(async (org: string, amountUsd: string, options: { reason: string }, command: Command) => {
      const { io, admin } = await session(command);
      const made = await apiData(
        admin().api.POST("/admin/v1/organizations/{organization_id}/adjustments", {
          params: { path: { organization_id: org } },
          body: { amount_usd: amountUsd, reason: options.reason },
        }),
      );
      if (io.json) return io.printJson(made);
      showCorrection(io, made);
    });

  ledgerOptions(
    admin
      .command("ledger")
      .description("Ledger entries of every organization, or of one (--org), newest first.")
      .option("--org <organization_id>", "only this organization's entries"),
  ).action(async (options: LedgerOptions & { org?: string }, command: Command) => {
    const { io, admin } = await session(command);
    const api = admin().api;
    await printLedger(io, options, (cursor) =>
      apiData(
        api.GET("/admin/v1/ledger", {
          params: { query: { ...ledgerQuery(options), organization_id: options.org, cursor } },
        }),
      ),
    );
  });

  admin
    .command("audit")
    .description("Changes made through the admin API, newest first, with the admin token that made each.")
    .option("--org <organization_id>", "only changes to this organization")
    .option("--actor <name>", "only changes this admin token made")
    .option("--limit <n>", "entries (1-100)", positiveInteger, 20)
    .action(async (options: { org?: string; actor?: string; limit: number }, command: Command) => {
      const { io, admin } = await session(command);
      const page = await apiData(
        admin().api.GET("/admin/v1/audit", {
          params: { query: { organization_id: options.org, actor: options.actor, limit: options.limit } },
        }),
      );
      if (io.json) return io.printJson(page);
      if (page.data.length === 0) return io.print("No changes recorded.");
      const rows = page.data.map((e) => [
        e.created_at,
        e.actor,
        e.action,
        e.target_id ?? "",
        JSON.stringify(e.detail),
      ]);
      io.print(table(io.c, ["WHEN", "BY", "ACTION", "TARGET", "DETAIL"], rows));
    });
}
