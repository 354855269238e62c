/**
 * The OpenAPI bundle (`@refvid/api-types/openapi.json`, the single source of truth) for the SDK's
 * tests: its operations, `$ref` resolution and named examples.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

export interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses?: Record<string, unknown>;
}
export interface Bundle {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>>;
}

const require = createRequire(import.meta.url);
const bundlePath = require.resolve("@refvid/api-types/openapi.json");
export const bundle = JSON.parse(readFileSync(bundlePath, "utf8")) as Bundle;

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

export function operationsOf(items: Bundle["paths"]): { path: string; method: string; op: Operation }[] {
  const out: { path: string; method: string; op: Operation }[] = [];
  for (const [path, item] of Object.entries(items)) {
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method)) out.push({ path, method, op });
    }
  }
  return out;
}

export const bundleOperations = operationsOf(bundle.paths);

/** Follows local `$ref`s (`#/components/...`). */
export function deref(value: unknown): unknown {
  let current = value;
  for (let depth = 0; depth < 32; depth++) {
    if (typeof current !== "object" || current === null || !("$ref" in current)) return current;
    const ref = (current as { $ref: string }).$ref;
    current = ref
      .slice(2)
      .split("/")
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], bundle);
  }
  throw new Error("$ref chain too deep");
}

/** The value of a named example of the bundle (`components.examples.<name>.value`). */
export function example<T = unknown>(name: string): T {
  const ex = bundle.components.examples?.[name] as { value?: unknown } | undefined;
  if (ex?.value === undefined) throw new Error(`components.examples.${name} not found in the bundle`);
  return structuredClone(ex.value) as T;
}
