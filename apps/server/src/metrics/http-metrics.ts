/**
 * Times every request into `refvid_http_request_duration_seconds`, labelled with the route
 * template Express matched (`/v1/runs/:run_id`), never the raw URL. A request refused before it
 * reached its route (a bad key, the rate limit, an invalid body) gets the template of the route it
 * would have reached, found in the app's own route table, so one endpoint is one label whatever
 * the answer; a path no route serves is `unmatched`.
 */
import type { Express, Request, Response } from "express";
import type { Metrics } from "./metrics.js";

export const UNMATCHED = "unmatched";

/** Told of every request once it is over, with how long it took. */
export type RequestObserver = (req: Request, res: Response, seconds: number) => void;

export function httpMetrics(metrics: Metrics, app: Express): RequestObserver {
  let table: RouteTable | undefined;
  return (req, res, seconds) => {
    table ??= routeTable(app);
    const route = matchedRoute(req) ?? table.match(req.method, pathOf(req.originalUrl)) ?? UNMATCHED;
    metrics.observeRequest(req.method, route, res.statusCode, seconds);
  };
}

/** The template of the route Express ran, when it reached one. */
function matchedRoute(req: Request): string | undefined {
  const path: unknown = req.route?.path;
  return typeof path === "string" ? `${req.baseUrl}${path}` : undefined;
}

const pathOf = (url: string) => url.split("?", 1)[0] ?? "/";

interface RouteEntry {
  template: string;
  methods: Set<string>;
  pattern: RegExp;
}

interface RouteTable {
  match(method: string, path: string): string | undefined;
}

/** The shape of Express's router stack that is read here: routes, and routers mounted at the root. */
interface StackLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
  slash?: boolean;
  handle?: { stack?: unknown };
}

/**
 * The app's routes with string paths, in the order Express tries them, from its router stack
 * (routes, and routers mounted at the root, which is how every router here is mounted). Matching
 * is Express's default: case-insensitive, a trailing slash allowed, `:name` one segment.
 */
function routeTable(app: Express): RouteTable {
  const entries: RouteEntry[] = [];
  const walk = (stack: unknown) => {
    if (!Array.isArray(stack)) return;
    for (const layer of stack as StackLayer[]) {
      const path = layer.route?.path;
      if (typeof path === "string") {
        const methods = new Set(Object.keys(layer.route?.methods ?? {}).map((m) => m.toUpperCase()));
        if (methods.has("GET")) methods.add("HEAD");
        entries.push({ template: path, methods, pattern: patternOf(path) });
      } else if (layer.slash && layer.handle?.stack) {
        walk(layer.handle.stack);
      }
    }
  };
  walk((app.router as unknown as { stack?: unknown }).stack);
  return {
    match(method, path) {
      return entries.find(
        (entry) => (entry.methods.has(method) || entry.methods.has("_ALL")) && entry.pattern.test(path),
      )?.template;
    },
  };
}

function patternOf(template: string): RegExp {
  const source = template
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}/?$`, "i");
}
