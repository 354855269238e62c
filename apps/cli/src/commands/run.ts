/**
 * `refvid run <model>` and `refvid price <model>`: the model's input as flags (see
 * model-flags.ts), priced before it is submitted, then followed live to its end.
 */
import {
  commandNameOf,
  type Model,
  type PricePreview,
  type RefvidClient,
  type Run,
  type SubmitOptions,
} from "@refvid/client";
import { type Command, Option } from "commander";
import { jsonObject, keyValue } from "../args.js";
import type { Config } from "../config.js";
import { saveVideo } from "../download.js";
import { EXIT_RUN_FAILED, UsageError, withFieldFlags } from "../errors.js";
import { chargeText, details, runOutcome, tierPrice, videoUrl } from "../format.js";
import { createOutput, type GlobalOptions, type Output } from "../io.js";
import { checkLocalFiles, type LocalFile, placeLocalFiles, uploadLocalFiles } from "../local-files.js";
import {
  buildInput,
  findModel,
  flagForField,
  flagName,
  type ModelInputOptions,
  modelInputOptions,
  unknownModel,
} from "../model-flags.js";
import { follow } from "../progress.js";

/** The models, looked up before parsing so that the model's flags can be declared. */
export interface Catalog {
  config?: Config;
  client?: RefvidClient;
  models?: Model[];
  /** Why the models could not be listed (no configuration, an API error); told when the command runs. */
  error?: unknown;
  /** The model named on the command line, if it is one. */
  model?: Model;
}

interface InputValues extends GlobalOptions {
  input?: Record<string, unknown>;
  [attribute: string]: unknown;
}

/** The words that name each model on the command line. */
function modelList(catalog: Catalog): string {
  const models = catalog.models ?? [];
  return models.map((m) => commandNameOf(m, models)).join(", ");
}

/** Declares the model's flags when the model is known, or lets the action explain what is wrong. */
function withModelInput(cmd: Command, catalog: Catalog): ModelInputOptions | undefined {
  cmd.option(
    "--input <json>",
    "more input fields as a JSON object, e.g. '{\"seed\": 7}'; flags win over it",
    jsonObject,
  );
  if (!catalog.model) {
    const known = catalog.models ? `Models: ${modelList(catalog)}. ` : "";
    cmd.addHelpText(
      "after",
      `\nThe model's input flags (--prompt, --image, --duration, …) come from the server. ${known}` +
        `See them with: refvid ${cmd.name()} <model> --help`,
    );
    // Let the action run, to say what is wrong (no configuration, an unknown model) rather than "unknown option".
    cmd.allowUnknownOption().allowExcessArguments();
    return undefined;
  }
  const inputs = modelInputOptions(catalog.model, cmd);
  for (const option of inputs.options) cmd.addOption(option);
  const tiers = catalog.model.pricing.tiers.map((t) => `  ${tierPrice(t)}  ${t.tier}`).join("\n");
  cmd.addHelpText("after", `\n${catalog.model.name}: ${catalog.model.summary}\nPrices:\n${tiers}`);
  return inputs;
}

/**
 * The model and its input from the command line, checked against the model's schema, with a
 * placeholder URL for each local file given as a reference (`local`); each of them exists.
 */
async function resolveInput(
  catalog: Catalog,
  inputs: ModelInputOptions | undefined,
  name: string,
  values: InputValues,
) {
  if (catalog.error) throw catalog.error;
  const model = catalog.model;
  // The catalog's model is the first word of the command line that names one; the operand must be it.
  if (!model || !inputs || !catalog.client || findModel(catalog.models ?? [], name) !== model) {
    throw new UsageError(`${unknownModel(catalog.models ?? [], name)} (see \`refvid models\`)`);
  }
  let local: LocalFile[] = [];
  const input = buildInput(model, inputs, values, values.input, (draft) => {
    local = placeLocalFiles(model, draft, (field) => flagName(inputs.flags, field));
  });
  await checkLocalFiles(local);
  return { model, inputs, client: catalog.client, input, local };
}

function priceLine(price: PricePreview, config: Config | undefined): string {
  const test = config?.apiKey?.startsWith("sk-test-") ? " (test key: priced, never charged)" : "";
  return `Price: ${chargeText(price)} (${price.price_tier})${test}`;
}

async function preview(
  client: RefvidClient,
  model: Model,
  input: Record<string, unknown>,
  inputs: ModelInputOptions,
) {
  try {
    return await client.previewPrice(model.slug, input);
  } catch (error) {
    throw withFieldFlags(error, (field) => flagForField(inputs.flags, field));
  }
}

async function confirmed(io: Output, price: PricePreview, yes: boolean | undefined): Promise<boolean> {
  if (yes) return true;
  if (!io.interactive) {
    throw new UsageError(
      "not submitting without a confirmation, and stdin is not a terminal: pass --yes to submit",
    );
  }
  const { confirm } = await import("@inquirer/prompts"); // loaded only when a question is asked
  return confirm(
    { message: `Submit this run for ${price.amount} USD?`, default: true },
    { output: process.stderr },
  );
}

async function finish(io: Output, run: Run, download: string | true | undefined): Promise<void> {
  const saved =
    download !== undefined && run.status === "succeeded" ? await saveVideo(run, download, io) : undefined;
  if (io.json) {
    io.printJson(saved ? { ...run, download: saved } : run);
  } else {
    io.print(runOutcome(io.c, run));
    const url = videoUrl(run);
    if (url && !saved) io.print(url);
  }
  if (run.status !== "succeeded") process.exitCode = EXIT_RUN_FAILED;
}

export function registerRun(program: Command, catalog: Catalog): void {
  const cmd = program
    .command("run")
    .summary("run a model: price, confirm, submit, follow live, download")
    .description(
      "Run a model on your prompt and references. Shows the price first and asks to confirm it " +
        "(--yes skips the question, and is needed when stdin is not a terminal), submits with an " +
        "Idempotency-Key, prints the run id, and follows the run live to its end.\n\n" +
        "A reference (--image, --video, --audio) is an http(s):// URL, or the path of a local file: " +
        "such a file is uploaded (POST /v1/files) once the run is confirmed, and its upload's URL " +
        "goes in the input.\n\n" +
        "The model's input flags below come from the server (GET /v1/models). " +
        "Exit code 1 when the run fails, times out or is cancelled.",
    )
    .argument(
      "<model>",
      "the model: its short name (model-d) or full slug (lab-d/model-d/reference-to-video)",
    )
    .option("-y, --yes", "submit without asking to confirm the price")
    .addOption(
      new Option("--download [file]", "save the MP4 when the run succeeds (default file: <run_id>.mp4)"),
    )
    .option("--webhook-url <url>", "have refvid POST the signed run.* event here when the run ends")
    .option(
      "--webhook-events <events>",
      "what --webhook-url receives, comma-separated: started, progress (at most one a second), completed (the default)",
      (text: string) => text.split(",").map((event) => event.trim()),
    )
    .option(
      "--metadata <key=value>",
      "your own key-value pair, kept on the run and searchable (repeatable)",
      keyValue,
    );
  const inputs = withModelInput(cmd, catalog);
  cmd.addHelpText(
    "after",
    "\nExamples:\n" +
      '  refvid run model-d --prompt "A slow dolly shot" --image https://example.com/a.png --yes --download\n' +
      '  refvid run model-d --prompt "A slow dolly shot" --image ./sculpture.png --yes --download\n' +
      '  refvid run model-a --prompt "Bars to music" --duration 6 --resolution 480p --yes --json > run.json',
  );
  cmd.action(async (name: string, values: InputValues, command: Command) => {
    const io = createOutput(command.optsWithGlobals());
    const resolved = await resolveInput(catalog, inputs, name, values);
    const { model, inputs: declared, client, input } = resolved;
    const price = await preview(client, model, input, declared);
    io.info(priceLine(price, catalog.config));
    if (!(await confirmed(io, price, values.yes as boolean | undefined))) {
      io.info("Not submitted.");
      return;
    }
    // Local files go up only now, once the run is to be submitted.
    await uploadLocalFiles(client, model, input, resolved.local, io);
    let run: Run;
    try {
      run = await client.submit(model.slug, input, {
        webhookUrl: values.webhookUrl as string | undefined,
        webhookEvents: values.webhookEvents as SubmitOptions["webhookEvents"],
        metadata: values.metadata as Record<string, string> | undefined,
      });
    } catch (error) {
      throw withFieldFlags(error, (field) =>
        field.endsWith("webhook_url")
          ? "--webhook-url"
          : field.includes("webhook_events")
            ? "--webhook-events"
            : field.includes("metadata")
              ? "--metadata"
              : flagForField(declared.flags, field),
      );
    }
    io.info(`Submitted ${run.run_id}. Follow it from anywhere: refvid runs watch ${run.run_id}`);
    const final = await follow(client, run.run_id, io, run);
    await finish(io, final, values.download as string | true | undefined);
  });
}

export function registerPrice(program: Command, catalog: Catalog): void {
  const cmd = program
    .command("price")
    .summary("what a run would cost, without running it")
    .description(
      "Price a model's input without running it (POST /v1/pricing/preview). Same flags as `refvid run`. " +
        "Local files given as references are checked but not uploaded: a price depends on which kinds " +
        "of reference are given, not on the files.",
    )
    .argument("<model>", "the model: its short name (model-d) or full slug");
  const inputs = withModelInput(cmd, catalog);
  cmd.action(async (name: string, values: InputValues, command: Command) => {
    const io = createOutput(command.optsWithGlobals());
    const {
      model,
      inputs: declared,
      client,
      input,
      local,
    } = await resolveInput(catalog, inputs, name, values);
    if (local.length > 0) {
      const paths = local.map((file) => file.path).join(", ");
      io.info(
        `Not uploading ${paths}: a price depends on which kinds of reference are given, not on the files.`,
      );
    }
    const price = await preview(client, model, input, declared);
    if (io.json) return io.printJson(price);
    io.print(
      details(io.c, [
        ["model", price.endpoint],
        ["amount", `${price.amount} USD`],
        ["seconds", price.billable_seconds],
        ["unit price", price.unit === "run" ? `${price.unit_price} USD a run` : `${price.unit_price} USD/s`],
        ["tier", price.price_tier],
      ]),
    );
  });
}
