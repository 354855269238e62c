/**
 * How each vendor words an input its model's schema refuses, from the neutral problems of
 * `input-schema.ts`. Where a vendor answers and with what status is the servers' business; this is
 * only the wording of each problem.
 */
import { type InputProblem, jsonType } from "./input-schema.js";

/** One problem at each place: the first the vendor's validator would name. */
function onePerPlace(problems: InputProblem[], rank: (p: InputProblem) => number): InputProblem[] {
  const best = new Map<string, InputProblem>();
  for (const problem of problems) {
    const place = JSON.stringify(problem.path);
    const seen = best.get(place);
    if (!seen || rank(problem) < rank(seen)) best.set(place, problem);
  }
  return [...best.values()];
}

const limit = (p: InputProblem) => p.params.limit as number;
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

// --- fal -------------------------------------------------------------------------------------

/** An entry of fal's `detail` array (docs.fal.ai/errors: `loc`, `msg`, `type`, `url`, `ctx`, `input`). */
export interface FalErrorDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
  url: string;
  ctx?: Record<string, unknown>;
  input?: unknown;
}

const PYDANTIC_TYPES: Record<string, [string, string]> = {
  string: ["string_type", "Input should be a valid string"],
  integer: ["int_type", "Input should be a valid integer"],
  number: ["float_type", "Input should be a valid number"],
  boolean: ["bool_type", "Input should be a valid boolean"],
  array: ["list_type", "Input should be a valid list"],
  object: ["dict_type", "Input should be a valid dictionary"],
};

/** Python's repr of a choice, as pydantic lists them: `'a', 'b' or 'c'`. */
function choices(values: unknown[]): string {
  const shown = values.map((v) => (typeof v === "string" ? `'${v}'` : JSON.stringify(v)));
  return shown.length > 1 ? `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}` : (shown[0] ?? "");
}

/**
 * fal's model errors (docs.fal.ai/errors, "Error Types"): pydantic's wording and fal's types
 * (`less_than_equal` with `ctx.le`, `sequence_too_long` with `ctx.max_length`, `one_of` with
 * `ctx.expected`), `loc` from `body`. A value of the wrong type for a choice is a `one_of`, as for a
 * pydantic `Literal`; an optional field's `null` branch is not reported.
 */
export function falRefusal(problems: InputProblem[]): FalErrorDetail[] {
  const rank = (p: InputProblem) =>
    p.keyword === "enum"
      ? 0
      : p.keyword === "anyOf" || p.keyword === "oneOf"
        ? 3
        : p.params.type === "null"
          ? 2
          : 1;
  return onePerPlace(problems, rank).map((p) => {
    const [type, msg, ctx] = falWording(p);
    return {
      loc: ["body", ...p.path],
      msg,
      type,
      url: `https://docs.fal.ai/errors#${type}`,
      ...(ctx ? { ctx } : {}),
      ...(p.value === undefined ? {} : { input: p.value }),
    };
  });
}

function falWording(p: InputProblem): [string, string, Record<string, unknown>?] {
  switch (p.keyword) {
    case "required":
      return ["missing", "Field required"];
    case "additionalProperties":
      return ["extra_forbidden", "Extra inputs are not permitted"];
    case "type": {
      const [type, msg] = PYDANTIC_TYPES[String(p.params.type).split(",")[0] ?? ""] ?? [
        "type_error",
        p.message,
      ];
      return [type, msg];
    }
    case "enum": {
      const expected = p.params.allowedValues as unknown[];
      return ["one_of", `Input should be ${choices(expected)}`, { expected }];
    }
    case "maximum":
      return ["less_than_equal", `Input should be less than or equal to ${limit(p)}`, { le: limit(p) }];
    case "exclusiveMaximum":
      return ["less_than", `Input should be less than ${limit(p)}`, { lt: limit(p) }];
    case "minimum":
      return ["greater_than_equal", `Input should be greater than or equal to ${limit(p)}`, { ge: limit(p) }];
    case "exclusiveMinimum":
      return ["greater_than", `Input should be greater than ${limit(p)}`, { gt: limit(p) }];
    case "maxItems":
      return [
        "sequence_too_long",
        `Sequence should have at most ${limit(p)} items`,
        { max_length: limit(p) },
      ];
    case "minItems":
      return [
        "sequence_too_short",
        `Sequence should have at least ${limit(p)} items`,
        { min_length: limit(p) },
      ];
    case "maxLength":
      return [
        "string_too_long",
        `String should have at most ${plural(limit(p), "character")}`,
        { max_length: limit(p) },
      ];
    case "minLength":
      return [
        "string_too_short",
        `String should have at least ${plural(limit(p), "character")}`,
        { min_length: limit(p) },
      ];
    default:
      return ["value_error", p.message];
  }
}

// --- Replicate -------------------------------------------------------------------------------

/** An entry of Replicate's `invalid_fields`. */
export interface ReplicateInvalidField {
  type: string;
  field: string;
  description: string;
}

/**
 * Replicate's `invalid_fields` for a refused `input`. Replicate's 2024-05-01 changelog example
 * (`required` "input is required", `additional_property_not_allowed` "Additional property inptu is
 * not allowed", the field being the object holding the property, "" for the body's root) matches
 * gojsonschema's error types and sentences (xeipuuv/gojsonschema locales.go), so the rest are
 * worded as that validator words them: a value of the wrong type for its type alone, a failed
 * `anyOf` as a whole.
 */
export function replicateRefusal(problems: InputProblem[]): ReplicateInvalidField[] {
  const rank = (p: InputProblem) => (p.keyword === "type" ? 0 : 1);
  return onePerPlace(
    problems.filter((p) => !p.inBranch),
    rank,
  ).map((p) => {
    const holder = p.keyword === "required" || p.keyword === "additionalProperties";
    const where = ["input", ...(holder ? p.path.slice(0, -1) : p.path)].join(".");
    const property = String(p.path.at(-1));
    const [type, description] = replicateWording(p, property, where);
    return { type, field: where, description };
  });
}

function replicateWording(p: InputProblem, property: string, where: string): [string, string] {
  switch (p.keyword) {
    case "required":
      return ["required", `${property} is required`];
    case "additionalProperties":
      return ["additional_property_not_allowed", `Additional property ${property} is not allowed`];
    case "type":
      return ["invalid_type", `Invalid type. Expected: ${p.params.type}, given: ${jsonType(p.value)}`];
    case "enum": {
      const allowed = (p.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ");
      return ["enum", `${where} must be one of the following: ${allowed}`];
    }
    case "maximum":
      return ["number_lte", `Must be less than or equal to ${limit(p)}`];
    case "exclusiveMaximum":
      return ["number_lt", `Must be less than ${limit(p)}`];
    case "minimum":
      return ["number_gte", `Must be greater than or equal to ${limit(p)}`];
    case "exclusiveMinimum":
      return ["number_gt", `Must be greater than ${limit(p)}`];
    case "maxItems":
      return ["array_max_items", `Array must have at most ${limit(p)} items`];
    case "minItems":
      return ["array_min_items", `Array must have at least ${limit(p)} items`];
    case "maxLength":
      return ["string_lte", `String length must be less than or equal to ${limit(p)}`];
    case "minLength":
      return ["string_gte", `String length must be greater than or equal to ${limit(p)}`];
    case "anyOf":
      return ["number_any_of", "Must validate at least one schema (anyOf)"];
    case "format":
      return ["format", `Does not match format '${p.params.format}'`];
    default:
      return [p.keyword, p.message];
  }
}

// --- Cog -------------------------------------------------------------------------------------

/** An entry of pydantic's `detail` as Cog answers it. */
export interface CogErrorDetail {
  loc: (string | number)[];
  msg: string;
  type: string;
}

/**
 * coglet's refusal (replicate/cog crates/coglet/src/input_validation.rs): the model's `Input` with
 * `additionalProperties: false`, one `Field required` (`value_error.missing`) per missing field, one
 * `Unexpected field 'x'` (`value_error.extra`) per unknown one, and every other finding as the Rust
 * `jsonschema` crate words it (`value_error`), at `["body", "input", <instance path>]`.
 */
export function cogRefusal(problems: InputProblem[]): CogErrorDetail[] {
  return problems
    .filter((p) => !p.inBranch)
    .map((p) => {
      const field = p.path.join("/") || "__root__";
      const loc = ["body", "input", field];
      if (p.keyword === "required") return { loc, msg: "Field required", type: "value_error.missing" };
      if (p.keyword === "additionalProperties") {
        return { loc, msg: `Unexpected field '${field}'`, type: "value_error.extra" };
      }
      return { loc, msg: cogWording(p), type: "value_error" };
    });
}

function cogWording(p: InputProblem): string {
  const value = JSON.stringify(p.value);
  switch (p.keyword) {
    case "type":
      return `${value} is not of type ${String(p.params.type)
        .split(",")
        .map((t) => JSON.stringify(t))
        .join(", ")}`;
    case "enum":
      return `${value} is not one of ${JSON.stringify(p.params.allowedValues)}`;
    case "maximum":
      return `${value} is greater than the maximum of ${limit(p)}`;
    case "exclusiveMaximum":
      return `${value} is greater than or equal to the maximum of ${limit(p)}`;
    case "minimum":
      return `${value} is less than the minimum of ${limit(p)}`;
    case "exclusiveMinimum":
      return `${value} is less than or equal to the minimum of ${limit(p)}`;
    case "maxItems":
      return `${value} has more than ${plural(limit(p), "item")}`;
    case "minItems":
      return `${value} has less than ${plural(limit(p), "item")}`;
    case "maxLength":
      return `${value} is longer than ${plural(limit(p), "character")}`;
    case "minLength":
      return `${value} is shorter than ${plural(limit(p), "character")}`;
    case "anyOf":
      return `${value} is not valid under any of the schemas listed in the 'anyOf' keyword`;
    default:
      return `${value} ${p.message}`;
  }
}
