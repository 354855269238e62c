/**
 * The playground's request as something to paste elsewhere: a curl command, TypeScript with
 * @refvid/client, or the refvid CLI. The key is read from REFVID_API_KEY, never written out.
 */
import { commandNameOf, inputFlagNames, type Model } from "@refvid/client";

/** Quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function curlSnippet(baseUrl: string, model: Model, input: Record<string, unknown>): string {
  return [
    `curl -sS -X POST ${shellQuote(`${baseUrl}${model.run_path}`)} \\`,
    `  -H "Authorization: Key $REFVID_API_KEY" \\`,
    `  -H "Content-Type: application/json" \\`,
    `  -H "Idempotency-Key: $(uuidgen)" \\`,
    `  -d ${shellQuote(JSON.stringify({ input }))}`,
  ].join("\n");
}

export function typescriptSnippet(baseUrl: string, model: Model, input: Record<string, unknown>): string {
  return [
    `import { createRefvidClient } from "@refvid/client";`,
    "",
    `const refvid = createRefvidClient({ baseUrl: ${JSON.stringify(baseUrl)}, apiKey: process.env.REFVID_API_KEY });`,
    `const run = await refvid.run(${JSON.stringify(model.slug)}, ${JSON.stringify(input, null, 2)});`,
    "console.log(run.output?.videos[0]?.url);",
  ].join("\n");
}

const isScalar = (value: unknown) => ["string", "number", "boolean"].includes(typeof value);

/**
 * `refvid run <model> --flag value …`, as the CLI reads it for any model: the model by the word the
 * CLI finds it by among `models`, each field by the flag the CLI gives it (`inputFlagNames`), and
 * the fields no flag carries (objects, lists of them) in `--input '{…}'`.
 */
export function cliSnippet(model: Model, models: readonly Model[], input: Record<string, unknown>): string {
  const flags = inputFlagNames(model);
  const words = ["refvid", "run", shellQuote(commandNameOf(model, models))];
  const rest: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(input)) {
    const name = flags.get(field);
    const flag = `--${name}`;
    if (name === undefined || !(isScalar(value) || (Array.isArray(value) && value.every(isScalar)))) {
      rest[field] = value;
    } else if (typeof value === "boolean") words.push(value ? flag : `--no-${name}`);
    else if (Array.isArray(value)) for (const item of value) words.push(flag, shellQuote(String(item)));
    else words.push(flag, shellQuote(String(value)));
  }
  if (Object.keys(rest).length > 0) words.push("--input", shellQuote(JSON.stringify(rest)));
  return words.join(" ");
}
