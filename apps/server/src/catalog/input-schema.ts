/**
 * A catalog model's input schema (JSON Schema 2020-12), compiled once: submit and price preview
 * check `input` against it, with the schema's defaults filled in, and report each problem as the
 * typed endpoints do (`body.input.duration: must be <= 15`).
 */
import type { FieldProblem } from "@refvid/core";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { toFieldProblem, toValidatorItem } from "./schema-problems.js";

export interface InputSchema {
  /** The schema as the operator wrote it, for `GET /v1/models`. */
  schema: Record<string, unknown>;
  /** The input with the schema's defaults filled in (a copy), and every problem found. */
  check(input: unknown, root?: string): { input: Record<string, unknown>; problems: FieldProblem[] };
}

/** Compiles `schema`; throws an Error saying why when it is not a JSON Schema Ajv can use. */
export function compileInputSchema(schema: Record<string, unknown>, slug: string): InputSchema {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate: ValidateFunction = ajv.compile(schema);
  return {
    schema,
    check(input, root = "/body/input") {
      const copy = structuredClone(input) as Record<string, unknown>;
      if (validate(copy)) return { input: copy, problems: [] };
      const problems = (validate.errors ?? []).map((error) =>
        toFieldProblem(toValidatorItem(error, root), slug),
      );
      return { input: copy, problems };
    },
  };
}
