/**
 * A model's published input schema, checked as a vendor checks a submitted input: Ajv's findings
 * in a neutral form (where, which keyword, its limits, the value found) that each protocol server
 * words as its vendor does. The schemas are JSON Schema 2020-12 with fal's `x-fal` keywords, hence
 * `strict: false`.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

export type JsonSchema = Record<string, unknown>;

/** One thing wrong with an input. */
export interface InputProblem {
  /**
   * Where, from the input's root: property names and array indices. For `required` and
   * `additionalProperties`, the missing or unexpected property itself.
   */
  path: (string | number)[];
  /** The JSON Schema keyword that failed (`required`, `type`, `maximum`, `maxItems`, `enum`, ...). */
  keyword: string;
  /** Ajv's parameters: `missingProperty`, `additionalProperty`, `limit`, `type`, `allowedValues`. */
  params: Record<string, unknown>;
  /** The value at `path` (undefined for a missing property). */
  value: unknown;
  /** Found inside a branch of an `anyOf`/`oneOf` that failed as a whole (reported beside it). */
  inBranch: boolean;
  /** Ajv's own sentence, for keywords a vendor's wording does not cover. */
  message: string;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, verbose: true });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);

/** Checks inputs against `schema`, compiled now (a server compiles at start, not on a request). */
export type InputCheck = (input: unknown) => InputProblem[];

/** A check of inputs against `schema`: the problems in Ajv's order, none when an input is valid. */
export function inputCheck(schema: JsonSchema): InputCheck {
  const validate = ajv.compile(schema);
  return (input) => (validate(input) ? [] : problemsOf(validate));
}

function problemsOf(validate: ValidateFunction): InputProblem[] {
  const errors = validate.errors ?? [];
  const branches = errors
    .filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")
    .map((e) => `${e.schemaPath}/`);
  return errors.map((error) => {
    const params = error.params as Record<string, unknown>;
    const property = params.missingProperty ?? params.additionalProperty;
    const named = typeof property === "string";
    return {
      path: named ? [...pathOf(error), property] : pathOf(error),
      keyword: error.keyword,
      params,
      value: named ? (error.data as Record<string, unknown> | null)?.[property] : error.data,
      inBranch: branches.some((prefix) => error.schemaPath.startsWith(prefix)),
      message: error.message ?? "is invalid",
    };
  });
}

/** `/image_urls/0` as `["image_urls", 0]` (the models' properties are never named by digits alone). */
function pathOf(error: ErrorObject): (string | number)[] {
  if (error.instancePath === "") return [];
  return error.instancePath
    .slice(1)
    .split("/")
    .map((part) => part.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** The JSON type name of a value, as validators report it (`integer` for whole numbers). */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
