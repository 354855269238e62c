/**
 * Statements with named parameters (`:run_id`), compiled once to pg's numbered form (`$1`), so a
 * statement of twenty parameters is read and called by name, and its text stays one prepared
 * statement. A `::type` cast is not a parameter.
 */
export interface NamedStatement<P extends Record<string, unknown>> {
  /** The text with `$n` placeholders, the same on every call. */
  readonly text: string;
  /** The values in placeholder order; a name missing from `params` throws (null is a value). */
  values(params: P): unknown[];
}

const PARAMETER = /(?<!:):([a-z_][a-z0-9_]*)/gi;

export function namedStatement<P extends Record<string, unknown>>(source: string): NamedStatement<P> {
  const names: string[] = [];
  const text = source.replace(PARAMETER, (_match, name: string) => {
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
  return {
    text,
    values(params) {
      return names.map((name) => {
        const value = params[name];
        if (value === undefined) throw new Error(`statement parameter :${name} is missing`);
        return value;
      });
    },
  };
}
