/**
 * A model's `input_schema` (JSON Schema, every `$ref` resolved) as form fields: what to draw for
 * each property, the values the form holds, the input they make, and the problems to show as the
 * user types, in the form's words. The schema and its rules are read by `@refvid/client`.
 */
import {
  type InputSchema,
  inputPropertiesOf,
  type PropertySchema,
  propertyTypeOf,
  type SchemaProblem,
  schemaProblem,
} from "@refvid/client";

/**
 * What a property is drawn as. `list` is one line per item (scalars, URLs above all); `json` is
 * JSON typed out, for what no other control can say: objects, lists of objects, unions.
 */
export type FieldKind = "text" | "longtext" | "select" | "number" | "integer" | "boolean" | "list" | "json";

export interface Field {
  name: string;
  kind: FieldKind;
  schema: PropertySchema;
  required: boolean;
}

/** What the form holds per field: text as typed, a checkbox as a boolean. */
export type FormValues = Record<string, string | boolean>;

const SCALARS = new Set(["string", "integer", "number", "boolean"]);

function kindOf(property: PropertySchema): FieldKind {
  const type = propertyTypeOf(property);
  if (property.enum) return "select";
  switch (type) {
    case "boolean":
    case "integer":
    case "number":
      return type;
    case "array":
      return SCALARS.has(propertyTypeOf(property.items ?? {}) ?? "string") ? "list" : "json";
    case "string":
      return (property.maxLength ?? 0) > 500 ? "longtext" : "text";
    default:
      return "json";
  }
}

/** The form's fields: what to draw for each property of the input schema. */
export function fieldsOf(schema: InputSchema): Field[] {
  return inputPropertiesOf(schema).map(({ name, schema: property, required }) => ({
    name,
    kind: kindOf(property),
    schema: property,
    required,
  }));
}

/** A number field's, or a number choice's, text as the number it is. */
const isNumeric = (field: Field) =>
  field.kind === "number" ||
  field.kind === "integer" ||
  (field.kind === "select" && ["integer", "number"].includes(propertyTypeOf(field.schema) ?? ""));

/** An item of a list, read as its items' type: `5` for a list of integers. */
function itemOf(field: Field, line: string): unknown {
  const type = propertyTypeOf(field.schema.items ?? {});
  if (type === "integer" || type === "number") {
    // A line that is no number stays text, for the check to call it one that is not.
    const number = Number(line);
    return Number.isFinite(number) ? number : line;
  }
  if (type === "boolean") return line === "true" ? true : line === "false" ? false : line;
  return line;
}

/** The text of a `json` field as the value it says, or `undefined` when it says none. */
function jsonOf(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** The form's starting values: each field's default, else empty. */
export function initialValues(fields: Field[]): FormValues {
  const values: FormValues = {};
  for (const field of fields) {
    const fallback = field.schema.default;
    if (field.kind === "boolean") values[field.name] = fallback === true;
    else if (field.kind === "list") values[field.name] = Array.isArray(fallback) ? fallback.join("\n") : "";
    else if (field.kind === "json")
      values[field.name] = fallback === undefined ? "" : JSON.stringify(fallback);
    else values[field.name] = fallback === undefined ? "" : String(fallback);
  }
  return values;
}

/** One entry per line, blank lines dropped. */
export const listItems = (text: string): string[] =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);

/** A list's text with `line` added as its last entry. */
export function addLine(text: string | boolean | undefined, line: string): string {
  const before = typeof text === "string" ? text.trimEnd() : "";
  return before ? `${before}\n${line}` : line;
}

/** The model input the values make: empty fields and defaults left out, numbers parsed. */
export function inputOf(fields: Field[], values: FormValues): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const field of fields) {
    const value = values[field.name];
    if (field.kind === "boolean") {
      // Leave a checkbox out while it says what the default says, so the request stays minimal.
      if (value !== (field.schema.default ?? false)) input[field.name] = value === true;
      continue;
    }
    const text = typeof value === "string" ? value : "";
    if (field.kind === "list") {
      const items = listItems(text).map((line) => itemOf(field, line));
      if (items.length > 0) input[field.name] = items;
    } else if (field.kind === "json") {
      const parsed = text.trim() === "" ? undefined : jsonOf(text);
      if (parsed && JSON.stringify(parsed.value) !== JSON.stringify(field.schema.default))
        input[field.name] = parsed.value;
    } else if (text.trim() !== "" && text !== String(field.schema.default)) {
      // A value equal to the default is left out too: the server applies it.
      input[field.name] = isNumeric(field) ? Number(text) : text;
    }
  }
  return input;
}

/** A schema problem in the form's words, about `what` (the field, or one line of a list). */
function inWords(problem: SchemaProblem, what = "This field"): string {
  switch (problem.rule) {
    case "type":
      if (problem.expected === "integer") return "Enter a whole number.";
      return `${what} must be ${/^[aeiou]/.test(problem.expected) ? "an" : "a"} ${problem.expected}.`;
    case "enum":
      return `${what} must be one of ${problem.allowed.join(", ")}.`;
    case "minItems":
      return `Give at least ${problem.limit}.`;
    case "maxItems":
      return `Give at most ${problem.limit} (${problem.actual} now).`;
    case "minLength":
      return `${what} needs at least ${problem.limit} character${problem.limit === 1 ? "" : "s"}.`;
    case "maxLength":
      return `${what} takes at most ${problem.limit} characters (${problem.actual} now).`;
    case "url":
      return `${what} must be an http or https URL.`;
    case "pattern":
      return `${what} must match ${problem.pattern}.`;
    case "minimum":
      return `At least ${problem.limit}.`;
    case "maximum":
      return `At most ${problem.limit}.`;
    case "item":
      return inWords(problem.problem, `Line ${problem.index + 1}`);
  }
}

const wordsOf = (problem: SchemaProblem | undefined) => problem && inWords(problem);

/** The problem with one field's value, if any, in words for the person typing it. */
export function problemOf(field: Field, value: string | boolean | undefined): string | undefined {
  if (field.kind === "boolean") return undefined;
  const text = typeof value === "string" ? value : "";
  // What the form holds is text: a list is one entry per line, a number is parsed, and an empty
  // field is one left unset.
  if (field.kind === "list") {
    const items = listItems(text).map((line) => itemOf(field, line));
    if (items.length === 0) return field.required ? "Give at least one." : undefined;
    return wordsOf(schemaProblem(field.schema, items));
  }
  if (text.trim() === "") return field.required ? "This field is required." : undefined;
  if (field.kind === "json") {
    const parsed = jsonOf(text);
    return parsed ? wordsOf(schemaProblem(field.schema, parsed.value)) : "Enter JSON, e.g. [1, 2] or {}.";
  }
  if (isNumeric(field)) {
    const number = Number(text);
    if (!Number.isFinite(number)) return "Enter a number.";
    return wordsOf(schemaProblem(field.schema, number));
  }
  return wordsOf(schemaProblem(field.schema, text));
}

/** Each field's problem, by field name; a field without one is left out. */
export function problemsOf(fields: Field[], values: FormValues): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const problem = problemOf(field, values[field.name]);
    if (problem) problems[field.name] = problem;
  }
  return problems;
}
