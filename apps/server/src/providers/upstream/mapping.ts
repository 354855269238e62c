/**
 * A catalog route's mapping: a [JSONata](https://docs.jsonata.org) expression from our input
 * (defaults filled in) to the vendor's input (`map`), or from the vendor's output to the video's
 * URL (`output`). Compiled once when the catalog is read, so a typo fails the file at boot or
 * reload, never a run. See docs/catalog.md ("Routes") and docs/decisions.md ("Route mapping in
 * JSONata").
 */
import jsonata from "jsonata";

/** A mapping that does not compile, or fails on an input; the message names where it is written. */
export class MappingError extends Error {
  override readonly name = "MappingError";
}

export interface CompiledExpression {
  /** The expression as written. */
  readonly source: string;
  /**
   * The expression's value on `data`, as plain JSON (objects, arrays, strings, finite numbers,
   * booleans, null), or `undefined` when it selects nothing. Throws MappingError.
   */
  evaluate(data: unknown): Promise<unknown>;
}

/**
 * Guards against an expression that loops or recurses without end: a mapping is a few field
 * moves, so a second of work or a deep recursion is a mistake in the file, not a heavy input.
 */
const GUARDS = { timeout: 1_000, stack: 500 } as const;

/**
 * Compiles `source` once. `where` says where the expression is written (`catalog.yaml:
 * models.x.routes[0].map`) and starts every error message; a syntax error reads
 * `<where>: <JSONata's message> (at character N)`, on one line.
 */
export function compileExpression(source: string, where: string): CompiledExpression {
  let expression: jsonata.Expression;
  try {
    expression = jsonata(source, GUARDS);
  } catch (err) {
    throw new MappingError(describe(where, err));
  }
  return {
    source,
    async evaluate(data) {
      let value: unknown;
      try {
        value = await expression.evaluate(data);
      } catch (err) {
        throw new MappingError(describe(where, err));
      }
      return toJson(value, where, "");
    },
  };
}

/** JSONata's errors are plain objects with `message` and `position`; built-ins may throw Errors. */
function describe(where: string, err: unknown): string {
  const { message, position } = (err ?? {}) as { message?: unknown; position?: unknown };
  const text = typeof message === "string" && message !== "" ? message : String(err);
  const at = typeof position === "number" ? ` (at character ${position})` : "";
  return `${where}: ${text.replace(/\s+/g, " ").trim()}${at}`;
}

/**
 * A plain copy of JSONata's value: its arrays carry flags (`sequence`, `keepSingleton`) and may
 * be shared with the input; a function or regex is not JSON and is refused with its path.
 */
function toJson(value: unknown, where: string, path: string): unknown {
  if (value === undefined || value === null) return value;
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (Number.isFinite(value)) return value;
      throw new MappingError(`${where}: gives ${value}${at(path)}, which is not a JSON number`);
    case "object": {
      if (Array.isArray(value)) {
        // JSONata drops nothing into arrays it builds; an input array may hold gaps, as JSON has none.
        return value.map((item, i) => toJson(item, where, `${path}[${i}]`) ?? null);
      }
      if (isFunction(value) || value instanceof RegExp) {
        break;
      }
      const copy: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const json = toJson(item, where, path === "" ? key : `${path}.${key}`);
        if (json !== undefined) copy[key] = json;
      }
      return copy;
    }
  }
  throw new MappingError(`${where}: gives a function${at(path)}, not a JSON value`);
}

function isFunction(value: object): boolean {
  const marks = value as { _jsonata_function?: unknown; _jsonata_lambda?: unknown };
  return marks._jsonata_function === true || marks._jsonata_lambda === true;
}

function at(path: string): string {
  return path === "" ? "" : ` at ${path}`;
}
