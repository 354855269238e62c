/**
 * A vendor's published input schema (JSON Schema 2020-12), and what it says of a mapped input:
 * each problem names the vendor's field and the limit a person can act on ("must be at most
 * 15"), so a submit that no route takes is refused before anything is reserved or sent
 * (docs/catalog.md, "Routes": `vendor_schema`). fal's files carry keywords of their own
 * (`x-fal`, `_fal_ui_field`, `x-fal-order-properties`, `limit_description`), hence `strict: false`.
 */
import { readFileSync } from "node:fs";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export interface VendorProblem {
  /** The vendor's field, dotted with `[i]`: `duration`, `elements[0].frontal_image_url`; "" for the root. */
  field: string;
  /** What is wrong, naming the limit: "must be at most 15", "has 10 items; at most 9", "is required". */
  message: string;
  /** The JSON Schema keyword that refused it (Ajv's `keyword`). */
  rule: string;
}

export interface VendorSchema {
  /** Where the schema came from (its path), for messages. */
  readonly source: string;
  /** Every problem the schema finds in `input`; empty when it takes it. Never changes `input`. */
  check(input: unknown): VendorProblem[];
}

/**
 * Reads and compiles the schema at `path`. Throws an Error that starts with `where` and names the
 * path when the file is missing, is not JSON, or is not a schema Ajv compiles.
 */
export function loadVendorSchema(path: string, where: string): VendorSchema {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
    throw new Error(
      `${where}: vendor schema ${path} ${missing ? "does not exist" : `cannot be read (${oneLine(err)})`}`,
    );
  }
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch (err) {
    throw new Error(`${where}: vendor schema ${path} is not JSON (${oneLine(err)})`);
  }
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    throw new Error(`${where}: vendor schema ${path} is not a JSON Schema object`);
  }
  try {
    return vendorSchemaFrom(schema, path);
  } catch (err) {
    throw new Error(`${where}: vendor schema ${path} does not compile (${oneLine(err)})`);
  }
}

/** Compiles `schema`, named `source` in messages. Throws Ajv's error when it does not compile. */
export function vendorSchemaFrom(schema: object, source: string): VendorSchema {
  // One Ajv per schema: vendor files may share an `$id`, which one instance refuses twice.
  const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  // OpenAPI's format for file contents; on the wire it is any string.
  ajv.addFormat("binary", true);
  const validate: ValidateFunction = ajv.compile(schema);
  return {
    source,
    check(input) {
      if (validate(input)) return [];
      return toProblems(validate.errors ?? [], input);
    },
  };
}

/**
 * Ajv's errors as problems. `anyOf`/`oneOf` report each branch that failed and then themselves:
 * when some branch got further into the value (an item of the array it expected), that branch's
 * problems are the ones to act on; otherwise the branches' shapes are put in one message
 * ("must be a string or null"). `if` only says that `then` failed, which is reported on its own.
 */
function toProblems(errors: readonly ErrorObject[], input: unknown): VendorProblem[] {
  const problems: VendorProblem[] = [];
  const seen = new Set<string>();
  const add = (problem: VendorProblem) => {
    const key = `${problem.field}\u0000${problem.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      problems.push(problem);
    }
  };
  const umbrellas = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf");
  const underUmbrella = (e: ErrorObject) =>
    umbrellas.some((u) => u !== e && e.schemaPath.startsWith(`${u.schemaPath}/`));
  for (const error of errors) {
    if (error.keyword === "if" || underUmbrella(error)) continue;
    if (error.keyword === "anyOf" || error.keyword === "oneOf") {
      const branches = errors.filter((e) => e.schemaPath.startsWith(`${error.schemaPath}/`));
      const deeper = branches.filter((e) => e.instancePath.length > error.instancePath.length);
      if (deeper.length > 0 && error.keyword === "anyOf") {
        for (const e of deeper) add(toProblem(e, input));
        continue;
      }
      const shapes = [...new Set(branches.map(shapeOf).filter((s): s is string => s !== undefined))];
      add({
        field: fieldOf(error.instancePath, input),
        message:
          error.keyword === "oneOf" && branches.length === 0
            ? "matches more than one of the forms it may take"
            : shapes.length > 0
              ? `must be ${shapes.join(" or ")}`
              : "does not match any form it may take",
        rule: error.keyword,
      });
      continue;
    }
    add(toProblem(error, input));
  }
  return problems;
}

function toProblem(error: ErrorObject, input: unknown): VendorProblem {
  const params = error.params as Record<string, unknown>;
  const at = fieldOf(error.instancePath, input);
  const rule = error.keyword;
  const limit = params.limit;
  switch (rule) {
    case "required":
      return { field: join(at, String(params.missingProperty)), message: "is required", rule };
    case "dependentRequired":
      return {
        field: join(at, String(params.missingProperty)),
        message: `is required when ${String(params.property)} is given`,
        rule,
      };
    case "additionalProperties":
      return { field: join(at, String(params.additionalProperty)), message: "is not a field it takes", rule };
    case "unevaluatedProperties":
      return {
        field: join(at, String(params.unevaluatedProperty)),
        message: "is not a field it takes",
        rule,
      };
    case "maximum":
      return { field: at, message: `must be at most ${limit}`, rule };
    case "minimum":
      return { field: at, message: `must be at least ${limit}`, rule };
    case "exclusiveMaximum":
      return { field: at, message: `must be less than ${limit}`, rule };
    case "exclusiveMinimum":
      return { field: at, message: `must be more than ${limit}`, rule };
    case "multipleOf":
      return { field: at, message: `must be a multiple of ${params.multipleOf}`, rule };
    case "maxItems":
      return { field: at, message: `has ${lengthOf(error.data)} items; at most ${limit}`, rule };
    case "minItems":
      return { field: at, message: `has ${lengthOf(error.data)} items; at least ${limit}`, rule };
    case "maxLength":
      return { field: at, message: `has ${lengthOf(error.data)} characters; at most ${limit}`, rule };
    case "minLength":
      return { field: at, message: `has ${lengthOf(error.data)} characters; at least ${limit}`, rule };
    case "uniqueItems":
      return { field: at, message: `has the same item twice (items ${params.j} and ${params.i})`, rule };
    case "not":
    case "false schema":
      return { field: at, message: "is not allowed", rule };
    default: {
      const shape = shapeOf(error);
      if (shape !== undefined) return { field: at, message: `must be ${shape}`, rule };
      return { field: at, message: error.message ?? "is invalid", rule };
    }
  }
}

/** What a type, enum, const, format or pattern error asks the value to be, as a phrase. */
function shapeOf(error: ErrorObject): string | undefined {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "type": {
      const types = Array.isArray(params.type) ? params.type : String(params.type).split(",");
      return types.map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(" or ");
    }
    case "enum":
      return `one of ${(params.allowedValues as unknown[]).map(show).join(", ")}`;
    case "const":
      return show(params.allowedValue);
    case "format":
      return `a valid ${String(params.format)}`;
    case "pattern":
      return `text matching ${String(params.pattern)}`;
    default:
      return undefined;
  }
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  integer: "a whole number",
  boolean: "true or false",
  object: "an object",
  array: "a list",
  null: "null",
};

/** A value as a person reads it in a list of choices: strings bare, anything else as JSON. */
function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function lengthOf(data: unknown): number | string {
  return typeof data === "string" || Array.isArray(data) ? data.length : "?";
}

/**
 * `/elements/0/frontal_image_url` as `elements[0].frontal_image_url`: a segment is an index when
 * the value it steps into is an array, which only the input can tell.
 */
function fieldOf(pointer: string, input: unknown): string {
  if (pointer === "") return "";
  let field = "";
  let value: unknown = input;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(value)) {
      field += `[${segment}]`;
      value = value[Number(segment)];
    } else {
      field = join(field, segment);
      value =
        typeof value === "object" && value !== null ? (value as Record<string, unknown>)[segment] : undefined;
    }
  }
  return field;
}

function join(field: string, name: string): string {
  return field === "" ? name : `${field}.${name}`;
}

function oneLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
}
