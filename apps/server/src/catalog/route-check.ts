/**
 * Which of a model's routes take an input: each route maps it (its JSONata `map`) and checks the
 * result against the vendor's published input schema. Submit refuses an input no route takes,
 * naming our field and the vendor's limit, before anything is reserved or sent; the worker skips
 * the routes that refuse a run's input.
 */
import type { FieldProblem } from "@refvid/core";
import type { ProviderRoute } from "./routes.js";

export interface RouteRefusal {
  route: ProviderRoute;
  problems: FieldProblem[];
}

/** The input a route sends its vendor: mapped by its `map`, or as it is. */
export async function routeInput(route: ProviderRoute, input: Record<string, unknown>): Promise<unknown> {
  return route.map ? route.map.evaluate(input) : input;
}

/** The routes that take `input`, in order, and why each other one refuses it. */
export async function checkRoutes(
  routes: readonly ProviderRoute[],
  input: Record<string, unknown>,
  fieldPrefix = "body.input",
): Promise<{ accepted: ProviderRoute[]; refused: RouteRefusal[] }> {
  const accepted: ProviderRoute[] = [];
  const refused: RouteRefusal[] = [];
  for (const route of routes) {
    if (!route.vendorSchema) {
      accepted.push(route);
      continue;
    }
    let mapped: unknown;
    try {
      mapped = await routeInput(route, input);
    } catch (err) {
      refused.push({
        route,
        problems: [{ field: fieldPrefix, message: (err as Error).message, rule: "map" }],
      });
      continue;
    }
    const problems = route.vendorSchema.check(mapped);
    if (problems.length === 0) accepted.push(route);
    else {
      refused.push({
        route,
        problems: problems.map((problem) => ({
          field: ourField(problem.field, mapped, input, fieldPrefix),
          message: `${problem.message} (route ${route.name}: the vendor's ${problem.field || "input"})`,
          rule: problem.rule,
        })),
      });
    }
  }
  return { accepted, refused };
}

/**
 * Our field behind a vendor's: the one of our fields whose value the vendor's field holds (a list
 * renamed as it is), else ours of the same name, else the input as a whole.
 */
function ourField(
  vendorField: string,
  mapped: unknown,
  input: Record<string, unknown>,
  prefix: string,
): string {
  const top = /^[^.[]+/.exec(vendorField)?.[0];
  if (!top) return prefix;
  const value = JSON.stringify((mapped as Record<string, unknown> | null)?.[top]);
  const same = Object.keys(input).find((key) => value !== undefined && JSON.stringify(input[key]) === value);
  const field = same ?? (top in input ? top : undefined);
  return field ? `${prefix}.${field}${vendorField.slice(top.length)}` : prefix;
}
