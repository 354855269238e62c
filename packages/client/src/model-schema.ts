/**
 * A model's `input_schema` (`GET /v1/models/{slug}`: JSON Schema with every `$ref` resolved) read
 * once for every tool that builds an input from it (the CLI's flags, the console's form): its
 * properties, which are required, and whether a value keeps the schema's rules. Problems come back
 * as data, not words, so that each tool says them in its own terms. The server checks the same
 * rules again; this only answers before a request is made.
 */
import type { Model } from "@refvid/api-types";

/** The part of JSON Schema that model inputs use. */
export interface PropertySchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  title?: string;
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
  anyOf?: PropertySchema[];
  oneOf?: PropertySchema[];
}

/** A model's input schema: an object of properties, some required. */
export interface InputSchema {
  properties?: Record<string, PropertySchema>;
  required?: string[];
}

/** One property of a model's input. */
export interface InputProperty {
  name: string;
  schema: PropertySchema;
  required: boolean;
}

/** A rule of the schema a value breaks. */
export type SchemaProblem =
  | { rule: "type"; expected: string }
  | { rule: "enum"; allowed: unknown[] }
  | { rule: "minItems" | "maxItems" | "minLength" | "maxLength"; limit: number; actual: number }
  | { rule: "minimum" | "maximum"; limit: number }
  | { rule: "url" }
  | { rule: "pattern"; pattern: string }
  | { rule: "item"; index: number; item: unknown; problem: SchemaProblem };

/** The input schema of `model`, typed as the parts this module reads. */
export function inputSchemaOf(model: Pick<Model, "input_schema">): InputSchema {
  return model.input_schema as InputSchema;
}

/** The one JSON type all of `values` have, if they have one (integers and other numbers: `number`). */
function typeOfValues(values: readonly unknown[]): string | undefined {
  if (values.every((v) => typeof v === "string")) return "string";
  if (values.every((v) => typeof v === "boolean")) return "boolean";
  if (values.every((v) => Number.isInteger(v))) return "integer";
  if (values.every((v) => typeof v === "number")) return "number";
  return undefined;
}

/**
 * A property in the plain form the tools read. A catalog's schema is the operator's (often a
 * vendor's, copied), not the spec's: an optional field may be a nullable union, `anyOf: [{ "type":
 * "integer" }, { "type": "null" }]` as Pydantic and fal write it, read here as its one non-null
 * schema under the keywords beside it (a description, a default); a `null` default or choice is
 * dropped; an enum without a `type` takes its values' type. Any other union is left as it is, for
 * the tools to pass over.
 */
export function plainProperty(property: PropertySchema): PropertySchema {
  const { anyOf, oneOf, ...rest } = property;
  const union = anyOf ?? oneOf;
  const branches = union?.filter((branch) => branch.type !== "null");
  let plain: PropertySchema = property;
  if (branches?.length === 1 && branches[0]) plain = { ...plainProperty(branches[0]), ...rest };
  // Null is "not set", which a tool says by leaving the field out: not a default, nor a choice.
  if (plain.default === null) {
    const { default: _, ...unset } = plain;
    plain = unset;
  }
  if (plain.enum?.includes(null)) plain = { ...plain, enum: plain.enum.filter((v) => v !== null) };
  if (plain.type === undefined && plain.enum && plain.enum.length > 0) {
    const type = typeOfValues(plain.enum);
    if (type) plain = { ...plain, type };
  }
  return plain.items ? { ...plain, items: plainProperty(plain.items) } : plain;
}

/** The input's properties in the schema's order, each marked required or not, each {@link plainProperty}. */
export function inputPropertiesOf(schema: InputSchema): InputProperty[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]) => ({
    name,
    schema: plainProperty(property),
    required: required.has(name),
  }));
}

/** The property's type, a nullable one (`["integer", "null"]`) read as its non-null type. */
export function propertyTypeOf(schema: PropertySchema): string | undefined {
  return Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
}

/** Whether the property holds an http or https URL (a reference to download, in model inputs). */
export function isUrlSchema(schema: PropertySchema): boolean {
  return schema.pattern === "^https?://" || schema.format === "uri";
}

/** The input field a problem's path names (`body.input.image_urls[0]` → `image_urls`), if any. */
export function fieldOfProblem(path: string): string | undefined {
  const match = /^(?:body\.)?input[./[]([A-Za-z0-9_]+)/.exec(path);
  return match?.[1];
}

/** A scheme, `://` and a host: the pattern alone would take `https://` with nothing after it. */
const HTTP_URL = /^https?:\/\/[^\s/]+/;

function lengthProblem(schema: PropertySchema, value: string): SchemaProblem | undefined {
  const actual = value.length;
  if (schema.minLength !== undefined && actual < schema.minLength)
    return { rule: "minLength", limit: schema.minLength, actual };
  if (schema.maxLength !== undefined && actual > schema.maxLength)
    return { rule: "maxLength", limit: schema.maxLength, actual };
  if (isUrlSchema(schema)) return HTTP_URL.test(value) ? undefined : { rule: "url" };
  // JSON Schema patterns are ECMA-262 with Unicode semantics, hence the "u" flag.
  if (schema.pattern !== undefined && !new RegExp(schema.pattern, "u").test(value))
    return { rule: "pattern", pattern: schema.pattern };
  return undefined;
}

function listProblem(schema: PropertySchema, value: unknown): SchemaProblem | undefined {
  if (!Array.isArray(value)) return { rule: "type", expected: "array" };
  const actual = value.length;
  if (schema.minItems !== undefined && actual < schema.minItems)
    return { rule: "minItems", limit: schema.minItems, actual };
  if (schema.maxItems !== undefined && actual > schema.maxItems)
    return { rule: "maxItems", limit: schema.maxItems, actual };
  for (const [index, item] of value.entries()) {
    const problem = schemaProblem(schema.items ?? {}, item);
    if (problem) return { rule: "item", index, item, problem };
  }
  return undefined;
}

/**
 * The first rule of `schema` that `value` breaks, if any: its type, enum, length, URL or
 * pattern, bounds, and for a list its size and then each item. An object's properties are not
 * checked (the server does).
 */
export function schemaProblem(schema: PropertySchema, value: unknown): SchemaProblem | undefined {
  const type = propertyTypeOf(schema);
  if (type === "array") return listProblem(schema, value);
  if (schema.enum && !schema.enum.includes(value)) return { rule: "enum", allowed: schema.enum };
  if (type === "string") {
    return typeof value === "string" ? lengthProblem(schema, value) : { rule: "type", expected: type };
  }
  if (type === "integer" || type === "number") {
    if (typeof value !== "number" || (type === "integer" && !Number.isInteger(value)))
      return { rule: "type", expected: type };
    if (schema.minimum !== undefined && value < schema.minimum)
      return { rule: "minimum", limit: schema.minimum };
    if (schema.maximum !== undefined && value > schema.maximum)
      return { rule: "maximum", limit: schema.maximum };
  }
  if (type === "boolean" && typeof value !== "boolean") return { rule: "type", expected: type };
  if (type === "object" && (typeof value !== "object" || value === null || Array.isArray(value)))
    return { rule: "type", expected: type };
  return undefined;
}
