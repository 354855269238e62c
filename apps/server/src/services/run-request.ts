/**
 * What submit and price preview share: the model a request names in the catalog in service, its
 * input read as a normalized request, the rules beyond the schema, and the price. Everything that
 * is wrong is reported at once, as `400` naming each field.
 */
import {
  checkModelRules,
  type FieldProblem,
  InvalidRequestError,
  type NormalizedRequest,
  type Price,
  priceRequest,
} from "@refvid/core";
import type { ServedModel } from "../catalog/served-catalog.js";
import type { AppDeps } from "../deps.js";

export interface RunRequest {
  served: ServedModel;
  /** The input with the model's defaults filled in, as the run keeps it. */
  input: Record<string, unknown>;
  request: NormalizedRequest;
  price: Price;
}

/**
 * Reads a request for model `slug`: `404 model_not_found` for a model the catalog does not serve;
 * `400` with every problem found, plus `extra` (a webhook URL's, say), when it may not run.
 */
export function readRunRequest(
  deps: Pick<AppDeps, "catalog">,
  slug: string,
  input: Record<string, unknown>,
  extra: FieldProblem[] = [],
): RunRequest {
  const served = deps.catalog.current.get(slug);
  const request = served.model.normalize(input);
  const problems = [...checkModelRules(served.model, request), ...extra];
  const price = priceRequest(served.model, request);
  if ("field" in price) throw new InvalidRequestError([...problems, price]);
  if (problems.length > 0) throw new InvalidRequestError(problems);
  return { served, input, request, price };
}
