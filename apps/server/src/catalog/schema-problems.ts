/**
 * Schema errors in the API's terms, whoever found them (express-openapi-validator for the spec's
 * operations, Ajv for price preview and catalog models' inputs): each becomes a FieldProblem named
 * by its dotted path (`body.input.image_urls[2]`) with a message a person can act on.
 */
import { type FieldProblem, InvalidRequestError, isBuiltInModelSlug, MODELS } from "@refvid/core";
import type { ErrorObject } from "ajv/dist/2020.js";

export interface ValidatorItem {
  path?: string;
  message?: string;
  errorCode?: string;
}

/** The validator's 400, with every problem it found. */
export function validatorErrorToInvalidRequest(
  items: ValidatorItem[],
  requestPath: string,
): InvalidRequestError {
  const slug = modelOfRequest(requestPath);
  return new InvalidRequestError(items.map((item) => toFieldProblem(item, slug)));
}

/** The model a submit path names, for messages that depend on it. */
function modelOfRequest(path: string): string | undefined {
  return /^\/v1\/run\/([^/]+\/[^/]+\/[^/]+)$/.exec(path)?.[1];
}

/** `/body/input/image_urls/2` -> `body.input.image_urls[2]`, naming the property a rule is about. */
export function toFieldProblem(item: ValidatorItem, slug?: string): FieldProblem {
  const message = item.message ?? "is invalid";
  const rule = (item.errorCode ?? "").replace(/\.openapi\.validation$/, "") || "schema";
  let path = item.path ?? "";
  // The validator reports a discriminated body (price preview) without its `body` prefix.
  if (path.startsWith("/") && !/^\/(body|query|path|headers|params)\b/.test(path))
    path = path.startsWith("/v1/") ? "/body" : `/body${path}`;
  const missing = /must have required property '([^']+)'/.exec(message);
  const named = /^'([^']+)' must be/.exec(message);
  if (named && path === "/body") path = `/body/${named[1]}`;
  const segments = path.split("/").filter(Boolean);
  if (rule === "required" && missing && segments[segments.length - 1] !== missing[1])
    segments.push(missing[1] as string);
  const field = segments.reduce(
    (acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg),
    "",
  );
  return {
    field:
      field === "headers" ? "header" : field.replace(/^headers\./, "header.").replace(/^params\./, "path."),
    message: humanize(message, field, slug),
    rule,
  };
}

function humanize(message: string, field: string, slug: string | undefined): string {
  if (message === "must NOT have additional properties") {
    const imageField = slug && isBuiltInModelSlug(slug) ? MODELS[slug].referenceFields.image : undefined;
    return field.endsWith("input.image_url") && imageField
      ? `is not accepted; send ${imageField}: [url] instead`
      : "is not a field of this request";
  }
  if (message === 'must match pattern "^https?://"') return "must be an http or https URL";
  return message.replace(/^'[^']+' /, "");
}

/** An Ajv error in the shape express-openapi-validator reports, so both map alike. */
export function toValidatorItem(error: ErrorObject, root = "/body"): ValidatorItem {
  const params = error.params as {
    additionalProperty?: string;
    missingProperty?: string;
    allowedValues?: unknown[];
  };
  let path = `${root}${error.instancePath}`;
  if (params.additionalProperty) path += `/${params.additionalProperty}`;
  if (params.missingProperty) path += `/${params.missingProperty}`;
  const message =
    error.keyword === "enum" && params.allowedValues
      ? `must be equal to one of the allowed values: ${params.allowedValues.join(", ")}`
      : (error.message ?? "is invalid");
  return { path, message, errorCode: `${error.keyword}.openapi.validation` };
}
