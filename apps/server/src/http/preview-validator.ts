/**
 * Validates `POST /v1/pricing/preview` bodies against the spec's input schema of the model named,
 * reporting EVERY problem as a submit does. express-openapi-validator compiles discriminated
 * bodies without `allErrors` and reads `endpoint` before checking the body is an object, so this
 * one operation is checked here, with the same schemas from the same bundled document.
 */
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { InvalidRequestError, MODEL_SLUGS, MODELS } from "@refvid/core";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { RequestHandler } from "express";
import { toFieldProblem, toValidatorItem } from "../catalog/schema-problems.js";
import type { AppDeps } from "../deps.js";

export function validatePreviewBody(deps: Pick<AppDeps, "catalog">): RequestHandler {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...loadOpenapiDocument(), $id: "refvid" });
  const validators = new Map<string, ValidateFunction>();
  for (const slug of MODEL_SLUGS) {
    const input = `${MODELS[slug].schemaName}Input`;
    validators.set(
      slug,
      ajv.compile({
        type: "object",
        additionalProperties: false,
        required: ["endpoint", "input"],
        properties: { endpoint: { const: slug }, input: { $ref: `refvid#/components/schemas/${input}` } },
      }),
    );
  }

  return (req, _res, next) => {
    const body: unknown = req.body;
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return next(
        new InvalidRequestError([
          { field: "body", message: "must be a JSON object with endpoint and input", rule: "type" },
        ]),
      );
    }
    const endpoint = (body as { endpoint?: unknown }).endpoint;
    const catalog = deps.catalog.current;
    if (typeof endpoint !== "string" || !catalog.find(endpoint)) {
      return next(
        new InvalidRequestError([
          {
            field: "body.endpoint",
            message:
              endpoint === undefined ? "is required" : `must be one of ${catalog.catalog.slugs.join(", ")}`,
            rule: endpoint === undefined ? "required" : "enum",
          },
        ]),
      );
    }
    const validate = validators.get(endpoint);
    // A catalog model's input is checked against its own schema by price preview itself.
    if (!validate) return next();
    if (validate(body)) return next();
    const problems = (validate.errors ?? []).map((error) => toFieldProblem(toValidatorItem(error), endpoint));
    next(new InvalidRequestError(problems));
  };
}
