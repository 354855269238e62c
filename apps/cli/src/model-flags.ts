/**
 * A model's input as command-line flags, read from the model's `input_schema` and `limits` as
 * `GET /v1/models` serves them, so that a new model or field (a catalog's) needs no change here:
 * each property becomes `--kebab-case` (enums as choices, numbers parsed, booleans as `--x`/`--no-x`,
 * lists repeatable), and each reference field (`limits.references[].field`) becomes `--image`,
 * `--video` or `--audio` after its kind; names as `inputFlagNames` (@refvid/client) gives them, so
 * that the console's copied commands agree. Values are checked against the schema before any request.
 */
import {
  COMMAND_OPTIONS,
  commandNameOf,
  fieldOfProblem,
  inputFlagNames,
  inputPropertiesOf,
  inputSchemaOf,
  type Model,
  modelsNamed,
  type PropertySchema,
  propertyTypeOf,
  type SchemaProblem,
  schemaProblem,
} from "@refvid/client";
import { type Command, InvalidArgumentError, Option } from "commander";
import { UsageError } from "./errors.js";

/** One input field and the flag that sets it. */
export interface InputFlag {
  field: string;
  flag: string;
  /** Where commander keeps the value in the command's options. */
  attribute: string;
  schema: PropertySchema;
}

export interface ModelInputOptions {
  flags: InputFlag[];
  options: Option[];
  required: string[];
}

/** The model `word` names on the command line (see `modelsNamed`), when it names one alone. */
export function findModel(models: readonly Model[], word: string): Model | undefined {
  const named = modelsNamed(models, word);
  return named.length === 1 ? named[0] : undefined;
}

/** Why `word` names no model: it names several, or none; `(see refvid models)` follows. */
export function unknownModel(models: readonly Model[], word: string): string {
  const named = modelsNamed(models, word);
  if (named.length > 1) {
    return `"${word}" names ${named.length} models: ${named.map((m) => m.slug).join(", ")}. Give the slug of the one you mean`;
  }
  return `unknown model "${word}". Models: ${models.map((m) => commandNameOf(m, models)).join(", ")}`;
}

function oneLine(text: string | undefined): string {
  return (text ?? "").replace(/\s+/g, " ").trim();
}

function parseNumber(flag: string, integer: boolean, allowed?: unknown[]) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(`${flag} takes ${integer ? "a whole number" : "a number"}.`);
    }
    if (allowed && !allowed.includes(n)) {
      throw new InvalidArgumentError(`Allowed choices are ${allowed.join(", ")}.`);
    }
    return n;
  };
}

/** `1 to 6`, `at least 0`, `at most 2`: a number's bounds, for its help. */
function bounds(schema: PropertySchema): string | undefined {
  const { minimum: min, maximum: max } = schema;
  if (min !== undefined && max !== undefined) return `${min} to ${max}`;
  if (min !== undefined) return `at least ${min}`;
  if (max !== undefined) return `at most ${max}`;
  return undefined;
}

function describe(schema: PropertySchema, required: boolean, repeatable: boolean): string {
  const notes: string[] = [];
  if (required) notes.push("required");
  if (repeatable)
    notes.push(schema.maxItems ? `repeat for more, up to ${schema.maxItems}` : "repeat for more");
  const range = schema.enum ? undefined : bounds(repeatable ? (schema.items ?? {}) : schema);
  if (range) notes.push(range);
  if (schema.default !== undefined) notes.push(`default: ${JSON.stringify(schema.default)}`);
  const text = oneLine(repeatable ? (schema.description ?? schema.items?.description) : schema.description);
  if (notes.length === 0) return text;
  return text ? `${text} (${notes.join("; ")})` : `(${notes.join("; ")})`;
}

/**
 * Every long option of `cmd` and of the program must be one `inputFlagNames` keeps input fields
 * off, or a field could take its name: a programming error, caught by any test that runs `cmd`.
 */
function checkCommandOptions(cmd: Command): void {
  const options = [...cmd.options, ...(cmd.parent?.options ?? [])];
  for (const option of options) {
    const name = option.long?.replace(/^--/, "");
    if (name && !COMMAND_OPTIONS.has(name)) {
      throw new Error(
        `${option.long} of refvid ${cmd.name()} is missing from COMMAND_OPTIONS (@refvid/client)`,
      );
    }
  }
}

/**
 * The flags of `model`'s input, named by `inputFlagNames`, for `cmd` when it is given (checking
 * that none of its own options can be taken).
 */
export function modelInputOptions(model: Model, cmd?: Command): ModelInputOptions {
  if (cmd) checkCommandOptions(cmd);
  const names = inputFlagNames(model);
  const kinds = new Map(model.limits.references.map((r) => [r.field, r.kind]));
  const schema = inputSchemaOf(model);
  const flags: InputFlag[] = [];
  const options: Option[] = [];
  const heading = `Input of ${model.name} (${model.slug}):`;

  for (const { name: field, schema: property, required: isRequired } of inputPropertiesOf(schema)) {
    const name = names.get(field);
    if (name === undefined) continue; // objects, unions and the like: set them with --input '{"field": …}'
    const type = propertyTypeOf(property);
    const kind = kinds.get(field);
    const flag = `--${name}`;
    let option: Option;
    if (type === "array") {
      const itemType = propertyTypeOf(property.items ?? {});
      const parse =
        itemType === "integer" || itemType === "number" ? parseNumber(flag, itemType === "integer") : String;
      option = new Option(
        `${flag} <${kind ? "url|file" : "value"}>`,
        describe(property, isRequired, true),
      ).argParser((value: string, previous: unknown[] | undefined) => [...(previous ?? []), parse(value)]);
    } else if (type === "boolean") {
      option = new Option(flag, describe(property, isRequired, false));
      const negated = new Option(`--no-${name}`, `Turn ${flag} off.`).helpGroup(heading);
      options.push(option.helpGroup(heading), negated);
      flags.push({ field, flag, attribute: option.attributeName(), schema: property });
      continue;
    } else if (type === "integer" || type === "number") {
      option = new Option(`${flag} <n>`, describe(property, isRequired, false));
      // Choices for the help, then the value read as a number and checked against them.
      if (property.enum) option.choices(property.enum.map(String));
      option.argParser(parseNumber(flag, type === "integer", property.enum));
    } else {
      const placeholder = kind ? "url|file" : property.enum ? "value" : "text";
      option = new Option(`${flag} <${placeholder}>`, describe(property, isRequired, false));
      if (property.enum) option.choices(property.enum.map(String));
    }
    options.push(option.helpGroup(heading));
    flags.push({ field, flag, attribute: option.attributeName(), schema: property });
  }
  return { flags, options, required: schema.required ?? [] };
}

/** The flag that sets the API field `field` (`body.input.image_urls[0]` → `--image`), if any. */
export function flagForField(flags: readonly InputFlag[], field: string): string | undefined {
  const name = fieldOfProblem(field);
  return name === undefined ? undefined : flags.find((f) => f.field === name)?.flag;
}

/** A schema problem in the words of a command line, said after the flag: "must be at least 0". */
function inWords(problem: SchemaProblem): string {
  switch (problem.rule) {
    case "type":
      if (problem.expected === "array") return "must be a list";
      if (problem.expected === "string") return "must be text";
      if (problem.expected === "boolean") return "must be true or false";
      return `must be ${/^[aeiou]/.test(problem.expected) ? "an" : "a"} ${problem.expected}`;
    case "enum":
      return `must be one of ${problem.allowed.map((v) => JSON.stringify(v)).join(", ")}`;
    case "minItems":
      return `needs at least ${problem.limit} (got ${problem.actual})`;
    case "maxItems":
      return `takes at most ${problem.limit} (got ${problem.actual})`;
    case "minLength":
      return `must be at least ${problem.limit} characters`;
    case "maxLength":
      return `must be at most ${problem.limit} characters`;
    case "url":
      return "must be an http:// or https:// URL";
    case "pattern":
      return `must match ${problem.pattern}`;
    case "minimum":
      return `must be at least ${problem.limit}`;
    case "maximum":
      return `must be at most ${problem.limit}`;
    case "item":
      return `${JSON.stringify(problem.item)} ${inWords(problem.problem)}`;
  }
}

/** The flag of `field`, or how to name a field that has none (set with `--input`). */
export function flagName(flags: readonly InputFlag[], field: string): string {
  return flags.find((f) => f.field === field)?.flag ?? `input field "${field}"`;
}

/**
 * The model input from the parsed flags, over the fields given as `--input` JSON; a missing
 * required field or a value the schema refuses is a {@link UsageError} naming the flag.
 * `prepare` may change the input before it is checked (local files for placeholder URLs).
 */
export function buildInput(
  model: Model,
  { flags, required }: ModelInputOptions,
  values: Record<string, unknown>,
  base: Record<string, unknown> = {},
  prepare?: (input: Record<string, unknown>) => void,
): Record<string, unknown> {
  const input: Record<string, unknown> = { ...base };
  for (const f of flags) if (values[f.attribute] !== undefined) input[f.field] = values[f.attribute];
  prepare?.(input);
  const properties = new Map(inputPropertiesOf(inputSchemaOf(model)).map((p) => [p.name, p.schema]));
  const name = (field: string) => flagName(flags, field);
  for (const field of required) {
    if (input[field] === undefined) {
      const description = oneLine(properties.get(field)?.description);
      throw new UsageError(`${model.name} needs ${name(field)}${description ? ` (${description})` : ""}`);
    }
  }
  for (const [field, value] of Object.entries(input)) {
    const schema = properties.get(field);
    const bad = schema && schemaProblem(schema, value);
    if (bad) throw new UsageError(`${name(field)} ${inWords(bad)}`);
  }
  return input;
}
