#!/usr/bin/env node
/**
 * The `refvid` command line. `run` and `price` take the model's input as flags, which come from
 * the server's model list: the model named on the command line is looked up before commander
 * parses it, so that its flags, their checks and their help can be declared.
 */
import { CommanderError } from "commander";
import type { Catalog } from "./commands/run.js";
import { apiClient, loadConfig } from "./config.js";
import { EXIT_USAGE, report } from "./errors.js";
import { createOutput, optionsFromArgv } from "./io.js";
import { findModel } from "./model-flags.js";
import { buildProgram } from "./program.js";

/** Options of the program that take a value, so that the value is not taken for the command. */
const GLOBAL_VALUE_OPTIONS = new Set(["--profile"]);

/** The words after `run` or `price` that are not flags (one of them names the model), if that is the command. */
function modelCommandWords(argv: readonly string[]): string[] | undefined {
  let i = 0;
  while (i < argv.length) {
    const word = argv[i] as string;
    if (word === "--") return undefined;
    if (!word.startsWith("-")) break;
    i += GLOBAL_VALUE_OPTIONS.has(word) ? 2 : 1;
  }
  if (argv[i] !== "run" && argv[i] !== "price") return undefined;
  return argv.slice(i + 1).filter((word, at, rest) => !word.startsWith("-") && rest[at - 1] !== "--profile");
}

function profileOf(argv: readonly string[]): string | undefined {
  const at = argv.indexOf("--profile");
  if (at !== -1) return argv[at + 1];
  return argv.find((word) => word.startsWith("--profile="))?.slice("--profile=".length);
}

/** Lists the models for `run` and `price`; a failure is kept, to be told if the command goes on. */
async function lookUpModels(argv: readonly string[]): Promise<Catalog> {
  const words = modelCommandWords(argv);
  if (words === undefined) return {};
  const catalog: Catalog = {};
  try {
    catalog.config = await loadConfig(profileOf(argv));
    catalog.client = apiClient(catalog.config);
    catalog.models = (await catalog.client.listModels()).data;
    const models = catalog.models;
    catalog.model = words.map((word) => findModel(models, word)).find((model) => model !== undefined);
  } catch (error) {
    catalog.error = error;
  }
  return catalog;
}

async function main(argv: readonly string[]): Promise<number> {
  try {
    const program = buildProgram(await lookUpModels(argv), argv);
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // commander has printed the message (or the help, or the version).
      return error.code === "commander.helpDisplayed" || error.code === "commander.version" ? 0 : EXIT_USAGE;
    }
    return report(error, createOutput(optionsFromArgv(argv)));
  }
}

const code = await main(process.argv.slice(2));
// Exit once stdout and stderr are flushed: an idle keep-alive connection must not hold the exit up.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
