/** `refvid login`, `refvid account` and `refvid models [model]`. */
import {
  commandNameOf,
  createRefvidClient,
  isUrlSchema,
  type Model,
  type PropertySchema,
  propertyTypeOf,
} from "@refvid/client";
import type { Command } from "commander";
import { DEFAULT_PROFILE, readConfigFile, saveProfile } from "../config.js";
import { UsageError } from "../errors.js";
import { details, priceRange, table, tierPrice } from "../format.js";
import type { Output } from "../io.js";
import { findModel, modelInputOptions, unknownModel } from "../model-flags.js";
import { session } from "../session.js";

interface LoginOptions {
  baseUrl?: string;
  apiKey?: string;
  adminToken?: string;
}

/** `models` lists every model, to name this one as `refvid run` finds it. */
function modelDetails(io: Output, model: Model, models: readonly Model[]): string {
  const { c } = io;
  const { flags, required } = modelInputOptions(model);
  const typeName = (schema: PropertySchema): string =>
    isUrlSchema(schema) ? "url" : (propertyTypeOf(schema) ?? "");
  const choices = (values: unknown[] | undefined) =>
    values && values.length > 8 ? `${values.slice(0, 4).join(", ")}, … ${values.at(-1)}` : values?.join(", ");
  const rows = flags.map((f) => [
    f.flag,
    f.schema.items ? `${typeName(f.schema.items)} (repeatable)` : typeName(f.schema),
    choices(f.schema.enum),
    f.schema.default === undefined
      ? required.includes(f.field)
        ? c.yellow("required")
        : ""
      : JSON.stringify(f.schema.default),
  ]);
  const references = model.limits.references.map((r) => {
    const limits = [
      r.formats.length > 0 ? r.formats.join("/") : "any image format",
      r.max_bytes ? `≤ ${Math.round(r.max_bytes / 1024 / 1024)} MB` : "",
      r.min_seconds !== undefined ? `${r.min_seconds}–${r.max_seconds} s each` : "",
    ].filter(Boolean);
    return `${r.kind} (${flags.find((f) => f.field === r.field)?.flag ?? r.field}): ${limits.join(", ")}`;
  });
  return [
    details(c, [
      ["model", model.name],
      ["slug", model.slug],
      ["summary", model.summary],
      ["longest", `${model.limits.max_duration_seconds} s`],
      ["references", references.join("\n")],
      ["prices", model.pricing.tiers.map((t) => `${tierPrice(t)}  ${t.tier}`).join("\n")],
    ]),
    "",
    table(c, ["FLAG", "TYPE", "CHOICES", "DEFAULT"], rows),
    "",
    c.dim(`Every flag's description: refvid run ${commandNameOf(model, models)} --help`),
  ].join("\n");
}

export function registerAccount(program: Command): void {
  program
    .command("login")
    .summary("save a server URL and API key as a profile")
    .description(
      "Ask for the server's base URL and your API key, check them (GET /v1/account), and save them " +
        "as a profile in $XDG_CONFIG_HOME/refvid/config.json (~/.config/refvid/config.json), readable " +
        "by you only. Pass --profile NAME to keep several. REFVID_BASE_URL, REFVID_API_KEY and " +
        "REFVID_ADMIN_TOKEN, when set, win over the profile.",
    )
    .option("--base-url <url>", "the server, e.g. http://localhost:8080 (asked when missing)")
    .option(
      "--api-key <key>",
      "an sk-live-… or sk-test-… key (asked when missing; a flag lands in your shell history)",
    )
    .option("--admin-token <token>", "also save the server's admin token, for `refvid admin`")
    .action(async (options: LoginOptions, command: Command) => {
      const { io, config } = await session(command, { creating: true });
      const { input, password } = await import("@inquirer/prompts"); // loaded only when needed: it is slow to load
      const saved = (await readConfigFile(config.path)).profiles[config.profile];
      const ask = (what: string) => {
        if (!io.interactive) throw new UsageError(`stdin is not a terminal: pass ${what}`);
      };
      let baseUrl = options.baseUrl;
      if (!baseUrl) {
        ask("--base-url");
        const fallback = saved?.base_url ?? config.baseUrl ?? "http://localhost:8080";
        baseUrl = await input(
          { message: "refvid server URL", default: fallback },
          { output: process.stderr },
        );
      }
      let apiKey = options.apiKey;
      if (!apiKey) {
        ask("--api-key");
        apiKey = await password({ message: "API key (sk-…)", mask: "*" }, { output: process.stderr });
      }
      baseUrl = baseUrl.replace(/\/+$/, "");
      if (!/^https?:\/\//.test(baseUrl))
        throw new UsageError("--base-url must start with http:// or https://");
      const account = await createRefvidClient({ baseUrl, apiKey }).getAccount();
      const profile = {
        base_url: baseUrl,
        api_key: apiKey,
        admin_token: options.adminToken ?? saved?.admin_token,
      };
      await saveProfile(config.profile, profile, config.path);
      if (io.json)
        return io.printJson({ profile: config.profile, path: config.path, base_url: baseUrl, account });
      io.print(
        `Logged in to ${baseUrl} as ${account.identity.organization_name} (${account.environment} key ${account.identity.api_key_prefix}…).`,
      );
      const flag = config.profile === DEFAULT_PROFILE ? "" : ` (use it with --profile ${config.profile})`;
      io.print(`Saved profile "${config.profile}" to ${config.path}${flag}.`);
    });

  program
    .command("account")
    .summary("your wallet, limits and usage")
    .description("Show the calling key's organization: wallet, concurrency and rate limit.")
    .action(async (_options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const a = await client().getAccount();
      if (io.json) return io.printJson(a);
      const w = a.wallet;
      io.print(
        details(io.c, [
          ["organization", `${a.identity.organization_name} (${a.organization_id})`],
          [
            "api key",
            `${a.identity.api_key_name ?? a.identity.api_key_prefix} (${a.api_key_id}, ${a.environment})`,
          ],
          ["balance", `${w.balance_usd} USD (${w.available_usd} available, ${w.reserved_usd} reserved)`],
          ["spent", `${w.total_spent_usd} USD of ${w.lifetime_top_ups_usd} USD topped up`],
          ["tier", a.concurrency.tier],
          ["runs in flight", `${a.concurrency.in_flight} of ${a.concurrency.limit} (organization)`],
          [
            "key in flight",
            `${a.api_key_concurrency.in_flight} of ${a.api_key_concurrency.limit} (this key)`,
          ],
          ["rate limit", `${a.rate_limit.remaining} of ${a.rate_limit.per_minute}/min left`],
          [
            "key budget",
            a.api_key_budget &&
              `${a.api_key_budget.remaining_usd} of ${a.api_key_budget.amount_usd} USD a ${a.api_key_budget.period} ` +
                `left (resets ${a.api_key_budget.resets_at})`,
          ],
        ]),
      );
    });

  program
    .command("models")
    .summary("the models, their input flags and prices")
    .description("List the models the server runs, or show one: its input flags, references and prices.")
    .argument("[model]", "a model's short name (model-d) or slug, to show that model")
    .action(async (name: string | undefined, _options: unknown, command: Command) => {
      const { io, client } = await session(command);
      const list = await client().listModels();
      if (name === undefined) {
        if (io.json) return io.printJson(list);
        const rows = list.data.map((m) => [m.name, m.slug, priceRange(m), m.summary]);
        io.print(table(io.c, ["MODEL", "SLUG", "PRICE", "SUMMARY"], rows));
        return;
      }
      const model = findModel(list.data, name);
      if (!model) throw new UsageError(unknownModel(list.data, name));
      if (io.json) return io.printJson(model);
      io.print(modelDetails(io, model, list.data));
    });
}
