/**
 * `refvid admin …`: organizations, API keys, top-ups and the usage report over the admin API
 * (`/admin/v1`), with the server's admin token (REFVID_ADMIN_TOKEN, or the profile's `admin_token`).
 */
import type { components } from "@refvid/api-types";
import { type Command, InvalidArgumentError, Option } from "commander";
import { positiveInteger } from "../args.js";
import { apiData, UsageError } from "../errors.js";
import { details } from "../format.js";
import type { Output } from "../io.js";
import { session } from "../session.js";
import { showUsage, usageOptions } from "../usage-report.js";
import { registerAdminMoney, showOrganization } from "./admin-money.js";

type ApiKey = components["schemas"]["ApiKey"];
type UsageReport = components["schemas"]["UsageReport"];

/** What the usage report groups by, as the API takes it. */
const GROUP_BY: readonly UsageReport["group_by"][] = [
  "api_key",
  "model",
  "provider",
  "route",
  "organization",
  "day",
];

function showKey(io: Output, key: ApiKey): void {
  io.print(
    details(io.c, [
      ["api key", key.api_key_id],
      ["organization", key.organization_id],
      ["name", key.name],
      ["environment", key.environment],
      ["prefix", key.key_prefix],
      ["max concurrency", key.max_concurrency],
      ["rate limit", `${key.rate_limit_per_minute}/min`],
      ["priority", key.priority],
      [
        "budget",
        key.budget &&
          `${key.budget.amount_usd} USD a ${key.budget.period}: ${key.budget.spent_usd} spent, ` +
            `${key.budget.reserved_usd} held, ${key.budget.remaining_usd} left until ${key.budget.resets_at}`,
      ],
      ["revoked", key.revoked_at],
    ]),
  );
}

interface UsageOptions {
  groupBy: UsageReport["group_by"];
  from?: string;
  to?: string;
  org?: string;
}

interface KeyOptions {
  environment?: "live" | "test";
  name?: string;
  maxConcurrency?: number;
  rateLimit?: number;
  priority?: "low" | "normal" | "high";
  budget?: KeyBudget | "none";
}

type KeyBudget = components["schemas"]["KeyBudget"];

/**
 * `--budget 50/month`, `--budget 0.50/day`, or `--budget none` (kept as "none": commander takes a
 * parser's null for no value).
 */
function budget(value: string): KeyBudget | "none" {
  if (value === "none") return "none";
  const match = /^([0-9]{1,9}(?:\.[0-9]{1,6})?)\/(day|week|month)$/.exec(value);
  if (!match)
    throw new InvalidArgumentError("Use an amount and a period like 50/month or 0.50/day, or none.");
  return { amount_usd: match[1] as string, period: match[2] as KeyBudget["period"] };
}

export function registerAdmin(program: Command): void {
  const admin = program
    .command("admin")
    .summary("organizations, API keys, top-ups and usage (needs the admin token)")
    .description(
      "Operate a refvid server: organizations, API keys, top-ups and usage. Needs the server's admin token " +
        "in REFVID_ADMIN_TOKEN (or saved with `refvid login --admin-token …`).",
    );

  const orgs = admin.command("orgs").description("Create and look at organizations.");
  orgs
    .command("create")
    .description("Create an organization with an empty wallet on the starter tier.")
    .argument("<name>", "its display name")
    .action(async (name: string, _options: unknown, command: Command) => {
      const { io, admin } = await session(command);
      const org = await apiData(admin().api.POST("/admin/v1/organizations", { body: { name } }));
      if (io.json) return io.printJson(org);
      showOrganization(io, org);
      io.print(io.c.dim(`Next: refvid admin keys create ${org.organization_id}`));
    });
  orgs
    .command("get")
    .description("Show an organization, its wallet and tier.")
    .argument("<organization_id>", "org_…")
    .action(async (id: string, _options: unknown, command: Command) => {
      const { io, admin } = await session(command);
      const path = { organization_id: id };
      const org = await apiData(
        admin().api.GET("/admin/v1/organizations/{organization_id}", { params: { path } }),
      );
      if (io.json) return io.printJson(org);
      showOrganization(io, org);
    });

  orgs
    .command("update")
    .description("Change an organization's share of the queue.")
    .argument("<organization_id>", "org_…")
    .requiredOption(
      "--queue-weight <n>",
      "its weight in the fair share (1-1000; 2 gets twice the runs of 1 while both wait)",
      positiveInteger,
    )
    .action(async (id: string, options: { queueWeight: number }, command: Command) => {
      const { io, admin } = await session(command);
      const org = await apiData(
        admin().api.PATCH("/admin/v1/organizations/{organization_id}", {
          params: { path: { organization_id: id } },
          body: { queue_weight: options.queueWeight },
        }),
      );
      if (io.json) return io.printJson(org);
      showOrganization(io, org);
    });

  const keys = admin.command("keys").description("Create, change and revoke API keys.");
  const limits = (cmd: Command) =>
    cmd
      .option("--name <name>", "a label to tell keys apart")
      .option("--max-concurrency <n>", "runs the key may have in flight (1-1000)", positiveInteger)
      .option("--rate-limit <n>", "requests the key may make per minute (1-100000)", positiveInteger)
      .addOption(
        new Option("--priority <priority>", "orders the organization's own queued runs").choices([
          "low",
          "normal",
          "high",
        ]),
      )
      .option(
        "--budget <amount/period>",
        "a spend budget, e.g. 50/month or 0.50/day (UTC); none removes it",
        budget,
      );
  limits(
    keys
      .command("create")
      .description("Create an API key. Its secret is shown once: store it.")
      .argument("<organization_id>", "org_…")
      .addOption(
        new Option("--environment <env>", "live keys spend the wallet; test keys never do").choices([
          "live",
          "test",
        ]),
      ),
  ).action(async (id: string, options: KeyOptions, command: Command) => {
    const { io, admin } = await session(command);
    const body = {
      environment: options.environment,
      name: options.name,
      max_concurrency: options.maxConcurrency,
      rate_limit_per_minute: options.rateLimit,
      priority: options.priority,
      budget: options.budget === "none" ? null : options.budget,
    };
    const key = await apiData(
      admin().api.POST("/admin/v1/organizations/{organization_id}/api-keys", {
        params: { path: { organization_id: id } },
        body,
      }),
    );
    if (io.json) return io.printJson(key);
    showKey(io, key);
    io.print(`${io.c.dim("key".padEnd(15))}  ${io.c.bold(key.key)}`);
    io.info(io.ce.yellow("Store the key now: it is never shown again."));
  });
  limits(
    keys
      .command("update")
      .description("Change a key's name or caps; they apply from its next request.")
      .argument("<api_key_id>", "key_…"),
  ).action(async (id: string, options: KeyOptions, command: Command) => {
    const { io, admin } = await session(command);
    const body = {
      name: options.name,
      max_concurrency: options.maxConcurrency,
      rate_limit_per_minute: options.rateLimit,
      priority: options.priority,
      budget: options.budget === "none" ? null : options.budget,
    };
    if (Object.values(body).every((v) => v === undefined)) {
      throw new UsageError(
        "nothing to change: pass --name, --max-concurrency, --rate-limit, --priority or --budget",
      );
    }
    const key = await apiData(
      admin().api.PATCH("/admin/v1/api-keys/{api_key_id}", { params: { path: { api_key_id: id } }, body }),
    );
    if (io.json) return io.printJson(key);
    showKey(io, key);
  });
  keys
    .command("revoke")
    .description("Revoke a key at once: its next request gets 401. Its runs carry on.")
    .argument("<api_key_id>", "key_…")
    .action(async (id: string, _options: unknown, command: Command) => {
      const { io, admin } = await session(command);
      const key = await apiData(
        admin().api.DELETE("/admin/v1/api-keys/{api_key_id}", { params: { path: { api_key_id: id } } }),
      );
      if (io.json) return io.printJson(key);
      showKey(io, key);
    });

  registerAdminMoney(admin);

  usageOptions(
    admin
      .command("usage")
      .description(
        "What the runs created in a window did and cost, by group and environment: runs, billed " +
          "seconds, spend, price, vendor cost and margin (spend less vendor cost; negative at a loss).",
      ),
    GROUP_BY,
    "model",
  )
    .option("--org <organization_id>", "only this organization's runs")
    .action(async (options: UsageOptions, command: Command) => {
      const { io, admin } = await session(command);
      const query = {
        group_by: options.groupBy,
        from: options.from,
        to: options.to,
        organization_id: options.org,
      };
      const report = await apiData(admin().api.GET("/admin/v1/usage", { params: { query } }));
      if (io.json) return io.printJson(report);
      showUsage(io, report, report.organization_id ?? "every organization", [
        ["VENDOR COST USD", (g) => g.vendor_cost_usd],
        ["MARGIN USD", (g) => (g.margin_usd.startsWith("-") ? io.c.red(g.margin_usd) : g.margin_usd)],
      ]);
    });
}
