/** Configuration from environment variables, where the runtime has them. */

/**
 * The variable `name` from `process.env`, or `undefined` when it is unset or empty, or the
 * runtime has no `process` (browsers, most edge runtimes) or refuses access (Deno without
 * `--allow-env` throws).
 */
export function readEnv(name: string, scope: object = globalThis): string | undefined {
  try {
    const env = (scope as { process?: { env?: Record<string, string | undefined> } }).process?.env;
    return env?.[name] || undefined;
  } catch {
    return undefined;
  }
}
