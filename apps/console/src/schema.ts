/**
 * A model's `input_schema` (JSON Schema, every `$ref` resolved) as form fields: what to draw for
 * each property, the values the form holds, the input they make, and the problems to show as the
 * user types. The server checks the same rules again; this only answers sooner.
 */
export interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  items?: PropertySchema;
  minItems?: number;
  maxItems?: number;
}

export interface InputSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

export type FieldKind = "text" | "longtext" | "select" | "number" | "integer" | "boolean" | "list";

export interface Field {
  name: string;
  kind: FieldKind;
  schema: PropertySchema;
  required: boolean;
}

/** What the form holds per field: text as typed, a checkbox as a boolean. */
export type FormValues = Record<string, string | boolean>;

export function typeOf(schema: PropertySchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
}

export function fieldsOf(schema: InputSchema): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const type = typeOf(property);
    const kind: FieldKind = property.enum
      ? "select"
      : type === "boolean"
        ? "boolean"
        : type === "integer"
          ? "integer"
          : type === "number"
            ? "number"
            : type === "array"
              ? "list"
              : (property.maxLength ?? 0) > 500
                ? "longtext"
                : "text";
    return { name, kind, schema: property, required: required.has(name) };
  });
}

/** The form's starting values: each field's default, else empty. */
export function initialValues(fields: Field[]): FormValues {
  const values: FormValues = {};
  for (const field of fields) {
    const fallback = field.schema.default;
    if (field.kind === "boolean") values[field.name] = fallback === true;
    else if (field.kind === "list") values[field.name] = Array.isArray(fallback) ? fallback.join("\n") : "";
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
      const items = listItems(text);
      if (items.length > 0) input[field.name] = items;
    } else if (text.trim() !== "" && text !== String(field.schema.default)) {
      // A value equal to the default is left out too: the server applies it.
      input[field.name] = field.kind === "number" || field.kind === "integer" ? Number(text) : text;
    }
  }
  return input;
}

function stringProblem(schema: PropertySchema, text: string, what = "This field"): string | undefined {
  if (schema.minLength !== undefined && text.length < schema.minLength) {
    return `${what} needs at least ${schema.minLength} character${schema.minLength === 1 ? "" : "s"}.`;
  }
  if (schema.maxLength !== undefined && text.length > schema.maxLength) {
    return `${what} takes at most ${schema.maxLength} characters (${text.length} now).`;
  }
  if (schema.pattern === "^https?://" || schema.format === "uri") {
    if (!/^https?:\/\/[^\s/]+/.test(text)) return `${what} must be an http or https URL.`;
  } else if (schema.pattern && !new RegExp(schema.pattern).test(text)) {
    return `${what} must match ${schema.pattern}.`;
  }
  if (schema.enum && !schema.enum.includes(text)) return `${what} must be one of ${schema.enum.join(", ")}.`;
  return undefined;
}

/** The problem with one field's value, if any, in words for the person typing it. */
export function problemOf(field: Field, value: string | boolean | undefined): string | undefined {
  if (field.kind === "boolean") return undefined;
  const text = typeof value === "string" ? value : "";
  const { schema } = field;
  if (field.kind === "list") {
    const items = listItems(text);
    if (items.length === 0) return field.required ? "Give at least one." : undefined;
    if (schema.minItems !== undefined && items.length < schema.minItems) {
      return `Give at least ${schema.minItems}.`;
    }
    if (schema.maxItems !== undefined && items.length > schema.maxItems) {
      return `Give at most ${schema.maxItems} (${items.length} now).`;
    }
    for (const [index, item] of items.entries()) {
      const problem = stringProblem(schema.items ?? {}, item, `Line ${index + 1}`);
      if (problem) return problem;
    }
    return undefined;
  }
  if (text.trim() === "") return field.required ? "This field is required." : undefined;
  if (field.kind === "number" || field.kind === "integer") {
    const number = Number(text);
    if (!Number.isFinite(number)) return "Enter a number.";
    if (field.kind === "integer" && !Number.isInteger(number)) return "Enter a whole number.";
    if (schema.minimum !== undefined && number < schema.minimum) return `At least ${schema.minimum}.`;
    if (schema.maximum !== undefined && number > schema.maximum) return `At most ${schema.maximum}.`;
    return undefined;
  }
  return stringProblem(schema, text);
}

export function problemsOf(fields: Field[], values: FormValues): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const problem = problemOf(field, values[field.name]);
    if (problem) problems[field.name] = problem;
  }
  return problems;
}

/** The input field a server problem names (`body.input.image_urls[0]` → `image_urls`), if any. */
export function fieldOfProblem(path: string): string | undefined {
  const match = /^(?:body\.)?input[./[]([A-Za-z0-9_]+)/.exec(path);
  return match?.[1];
}
