/**
 * Validates `POST /v1/pricing/preview` bodies against the spec's own per-model request schemas,
 * reporting EVERY problem as a submit does. express-openapi-validator compiles discriminated
 * bodies without `allErrors` and reads `endpoint` before checking the body is an object, so this
 * one operation is checked here, with the same schemas from the same bundled document.
 */
import { loadOpenapiDocument } from "@refvid/api-types/document";
import { InvalidRequestError, MODEL_SLUGS, MODELS } from "@refvid/core";
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { RequestHandler } from "express";
import type { AppDeps } from "../deps.js";
import { toFieldProblem } from "./validation-errors.js";

export function validatePreviewBody(deps: Pick<AppDeps, "catalog">): RequestHandler {
  const ajv = new Ajv2020({ allErrors: true, useDefaults: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema({ ...loadOpenapiDocument(), $id: "refvid" });
  const validators = new Map<string, ValidateFunction>();
  for (const slug of MODEL_SLUGS) {
    const schema = `PricePreview${MODELS[slug].schemaName}Request`;
    validators.set(slug, ajv.compile({ $ref: `refvid#/components/schemas/${schema}` }));
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
    const validate = validators.get(endpoint) as ValidateFunction;
    if (validate(body)) return next();
    const problems = (validate.errors ?? []).map((error) => toFieldProblem(toValidatorItem(error), endpoint));
    next(new InvalidRequestError(problems));
  };
}

/** An Ajv error in the shape express-openapi-validator reports, so both map alike. */
function toValidatorItem(error: ErrorObject) {
  const params = error.params as {
    additionalProperty?: string;
    missingProperty?: string;
    allowedValues?: unknown[];
  };
  let path = `/body${error.instancePath}`;
  if (params.additionalProperty) path += `/${params.additionalProperty}`;
  if (params.missingProperty) path += `/${params.missingProperty}`;
  const message =
    error.keyword === "enum" && params.allowedValues
      ? `must be equal to one of the allowed values: ${params.allowedValues.join(", ")}`
      : (error.message ?? "is invalid");
  return { path, message, errorCode: `${error.keyword}.openapi.validation` };
}
