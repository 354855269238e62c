/**
 * The playground's request as something to paste elsewhere: a curl command, TypeScript with
 * @refvid/client, or the refvid CLI. The key is read from REFVID_API_KEY, never written out.
 */
import type { Model } from "@refvid/client";

/** Quotes a word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const kebab = (name: string) => name.replace(/_/g, "-");

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

/** `refvid run <model> --flag value …`: reference fields by kind (`--image`), others in kebab-case. */
export function cliSnippet(model: Model, input: Record<string, unknown>): string {
  const referenceFlag = new Map(model.limits.references.map((r) => [r.field, r.kind]));
  const words = ["refvid", "run", model.name];
  for (const [field, value] of Object.entries(input)) {
    const flag = `--${referenceFlag.get(field) ?? kebab(field)}`;
    if (typeof value === "boolean") words.push(value ? flag : `--no-${flag.slice(2)}`);
    else if (Array.isArray(value)) for (const item of value) words.push(flag, shellQuote(String(item)));
    else words.push(flag, shellQuote(String(value)));
  }
  return words.join(" ");
}
