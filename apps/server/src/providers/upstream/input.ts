/**
 * The input a vendor gets: the run's input as submitted (defaults filled in), shaped by its route:
 * only some of our fields (`only`) or all but some (`omit`), some read as numbers (`as_number`:
 * `"8s"` and `"10"` become 8 and 10), renamed (`rename: {ours: theirs}`), and fixed extra fields
 * (`input: {…}`) added last. Field names in `only`, `omit` and `as_number` are ours.
 */
export interface InputMapping {
  /** Fields added to every input, winning over the run's own. */
  input?: Record<string, unknown>;
  /** Our field name to the vendor's. */
  rename?: Record<string, string>;
  /** Only these of our fields are sent (a model that refuses fields it does not declare). */
  only?: readonly string[];
  /** These of our fields are not sent. */
  omit?: readonly string[];
  /** These of our fields are sent as numbers: the number a string value starts with. */
  asNumber?: readonly string[];
}

export function vendorInput(
  input: Record<string, unknown>,
  mapping: InputMapping = {},
): Record<string, unknown> {
  const shaped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (mapping.only && !mapping.only.includes(key)) continue;
    if (mapping.omit?.includes(key)) continue;
    shaped[mapping.rename?.[key] ?? key] = mapping.asNumber?.includes(key) ? asNumber(value) : value;
  }
  return { ...shaped, ...mapping.input };
}

/** `"8s"` → 8, `"10"` → 10, `"2.5"` → 2.5; anything without a leading number is left as it is. */
function asNumber(value: unknown): unknown {
  if (typeof value !== "string") return value;
  const match = /^\s*(-?\d+(?:\.\d+)?)/.exec(value);
  return match ? Number(match[1]) : value;
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

/**
 * Reports what a job's logs say of its progress through `onProgress`: only forward moves, and
 * below 1 (the job is done only once its video is home).
 */
export function logProgress(onProgress: (fraction: number) => void): (logs: unknown) => void {
  let reported = 0;
  return (logs) => {
    const fraction = progressFromLogs(logs);
    if (fraction === undefined) return;
    const capped = Math.min(fraction, 0.99);
    if (capped <= reported) return;
    reported = capped;
    onProgress(capped);
  };
}
