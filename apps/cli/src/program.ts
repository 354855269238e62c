/** The `refvid` command tree (commander). */
import { readFileSync } from "node:fs";
import { Command } from "commander";
import { registerAccount } from "./commands/account.js";
import { registerAdmin } from "./commands/admin.js";
import { registerFiles } from "./commands/files.js";
import { registerLedger } from "./commands/ledger.js";
import { type Catalog, registerPrice, registerRun } from "./commands/run.js";
import { registerRuns } from "./commands/runs.js";
import { registerUsage } from "./commands/usage.js";
import { registerWebhooks } from "./commands/webhooks.js";
import { createOutput, optionsFromArgv } from "./io.js";

export const VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

const EPILOGUE = `
Configuration:
  REFVID_BASE_URL, REFVID_API_KEY and REFVID_ADMIN_TOKEN, or the profile saved by \`refvid login\`
  (--profile NAME picks another). The variables win over the profile.

Output:
  Results on stdout, progress and questions on stderr. --json prints one JSON document on stdout.

Exit codes:
  0 ok, 1 the run failed, timed out or was cancelled, 2 bad usage (a wrong flag or input),
  3 the API refused the request or could not be reached.

Get started:
  refvid login
  refvid models
  refvid run model-d --prompt "A slow dolly shot" --image https://example.com/a.png --download
  refvid run model-d --prompt "A slow dolly shot" --image ./sculpture.png --download`;

export function buildProgram(catalog: Catalog, argv: readonly string[]): Command {
  const { ce } = createOutput(optionsFromArgv(argv));
  const program = new Command("refvid")
    .description(
      "Generate videos with a refvid server, follow runs, and manage your account from the terminal.",
    )
    .version(VERSION, "-V, --version", "print the version")
    .helpOption("-h, --help", "show help for a command")
    .helpCommand(false)
    .option("--json", "print one JSON document on stdout, for scripts")
    .option("--profile <name>", 'use this profile saved by `refvid login` instead of "default"')
    .option("--no-color", "no colours (NO_COLOR=1 does the same)")
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError("(add --help for usage)")
    .exitOverride()
    .configureOutput({
      outputError: (message, write) => write(message.replace(/^error:/, ce.red("error:"))),
    });
  program.addHelpText("after", EPILOGUE);

  registerRun(program, catalog);
  registerRuns(program);
  registerPrice(program, catalog);
  registerFiles(program);
  registerAccount(program);
  registerLedger(program);
  registerUsage(program);
  registerWebhooks(program);
  registerAdmin(program);
  return program;
}
