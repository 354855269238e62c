/**
 * A cache in front of express-openapi-validator's route lookup. On every request its metadata
 * middleware walks the spec's routes and compiles each template with path-to-regexp's
 * `pathToRegexp` until one matches (`lookupRoute` in its `openapi.metadata.js`), so a poll spent
 * about a tenth of its CPU compiling the same few dozen regular expressions again. A compiled
 * template depends only on the template and its options, so this wraps the `pathToRegexp` of the
 * path-to-regexp instance the validator loads with a memo of those. The same change is proposed
 * upstream (cdimascio/express-openapi-validator#1217). See docs/decisions.md, "Hot path".
 */
import { createRequire } from "node:module";

interface PathToRegexpModule {
  pathToRegexp: (path: unknown, options?: Record<string, unknown>) => { regexp: RegExp; keys: unknown[] };
}

const CACHED = Symbol.for("refvid.cachedPathToRegexp");
/** More templates than any spec has; past it, lookups compile as before rather than grow the memo. */
const MAX_ENTRIES = 1000;
/** The options the validator passes; a call with any other is passed through untouched. */
const KNOWN_OPTIONS = new Set(["sensitive", "strict"]);

/** The path-to-regexp module as express-openapi-validator resolves it. */
export function validatorPathToRegexp(): PathToRegexpModule {
  const fromHere = createRequire(import.meta.url);
  const fromValidator = createRequire(fromHere.resolve("express-openapi-validator"));
  return fromValidator("path-to-regexp") as PathToRegexpModule;
}

/** Memoizes the validator's route compilation; idempotent. */
export function cacheValidatorRouteLookup(): void {
  const module = validatorPathToRegexp();
  const compile = module.pathToRegexp as PathToRegexpModule["pathToRegexp"] & { [CACHED]?: true };
  if (compile[CACHED]) return;
  type Compiled = ReturnType<PathToRegexpModule["pathToRegexp"]>;
  /** Per template, the four combinations of `sensitive` and `strict`. */
  const memo = new Map<string, (Compiled | undefined)[]>();
  const cached = (path: unknown, options?: Record<string, unknown>) => {
    if (typeof path !== "string" || !options) return compile(path, options);
    for (const name in options) if (!KNOWN_OPTIONS.has(name)) return compile(path, options);
    const variant = (options.sensitive ? 1 : 0) + (options.strict ? 2 : 0);
    let variants = memo.get(path);
    let found = variants?.[variant];
    if (!found) {
      // Frozen: every request shares it. Its RegExp has no `g` or `y` flag, so `exec` keeps no state.
      found = Object.freeze({ ...compile(path, options) });
      Object.freeze(found.keys);
      if (!variants && memo.size < MAX_ENTRIES) {
        variants = [];
        memo.set(path, variants);
      }
      if (variants) variants[variant] = found;
    }
    return found;
  };
  module.pathToRegexp = Object.assign(cached, { [CACHED]: true as const });
}
