/**
 * The input a vendor gets: the run's input as submitted (defaults filled in), with a route's
 * renames (`rename: {ours: theirs}`) and fixed extra fields (`input: {…}`) applied.
 */
export interface InputMapping {
  /** Fields added to every input, winning over the run's own. */
  input?: Record<string, unknown>;
  /** Our field name to the vendor's. */
  rename?: Record<string, string>;
}

export function vendorInput(
  input: Record<string, unknown>,
  mapping: InputMapping = {},
): Record<string, unknown> {
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) renamed[mapping.rename?.[key] ?? key] = value;
  return { ...renamed, ...mapping.input };
}

/**
 * Progress from a vendor's logs: the last percentage a progress bar printed (`42%|████`), as a
 * fraction; undefined when the logs show none.
 */
export function progressFromLogs(logs: unknown): number | undefined {
  const text = Array.isArray(logs)
    ? logs
        .map((line) =>
          typeof line === "string" ? line : String((line as { message?: unknown })?.message ?? ""),
        )
        .join("\n")
    : typeof logs === "string"
      ? logs
      : "";
  const matches = [...text.matchAll(/(\d{1,3})%\|/g)];
  const last = matches.at(-1)?.[1];
  if (last === undefined) return undefined;
  return Math.min(100, Number(last)) / 100;
}
