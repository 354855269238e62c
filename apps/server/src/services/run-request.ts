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
import { checkRoutes } from "../catalog/route-check.js";
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
 * `400` with every problem found, plus `extra` (a webhook URL's, say), when it may not run: the
 * input against a catalog model's schema, the rules beyond it, a price, and at least one route
 * whose vendor takes the input as the route maps it.
 */
export async function readRunRequest(
  deps: Pick<AppDeps, "catalog">,
  slug: string,
  given: Record<string, unknown>,
  extra: FieldProblem[] = [],
): Promise<RunRequest> {
  const served = deps.catalog.current.get(slug);
  let input = given;
  if (served.input) {
    const checked = served.input.check(given);
    if (checked.problems.length > 0) throw new InvalidRequestError([...checked.problems, ...extra]);
    input = checked.input;
  }
  const request = served.model.normalize(input);
  const problems = [...checkModelRules(served.model, request), ...extra];
  const { durationField, maxDurationSeconds } = served.model;
  if (durationField && request.duration !== "auto" && request.duration > maxDurationSeconds) {
    problems.push({
      field: `body.input.${durationField}`,
      message: `must be at most ${maxDurationSeconds} seconds for ${served.model.name}`,
      rule: "maximum",
    });
  }
  const price = priceRequest(served.model, request);
  if ("field" in price) throw new InvalidRequestError([...problems, price]);
  if (problems.length > 0) throw new InvalidRequestError(problems);
  const routes = await checkRoutes(served.routes, input);
  if (routes.accepted.length === 0 && routes.refused.length > 0) {
    // One problem per field, naming every route's limit on it.
    const byField = new Map<string, FieldProblem>();
    for (const problem of routes.refused.flatMap((refusal) => refusal.problems)) {
      const seen = byField.get(problem.field);
      if (seen) seen.message += `; ${problem.message}`;
      else byField.set(problem.field, { ...problem });
    }
    throw new InvalidRequestError([...byField.values()]);
  }
  return { served, input, request, price };
}
