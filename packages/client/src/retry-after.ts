/** `Retry-After`, read by the retrying fetch and by the errors that report it. */

/**
 * Parses a `Retry-After` value, either delta-seconds or an HTTP-date, into milliseconds from
 * `nowMs`. Returns `undefined` when absent or unparseable; a date in the past gives 0.
 */
export function parseRetryAfter(
  value: string | null | undefined,
  nowMs: number = Date.now(),
): number | undefined {
  if (value == null) return undefined;
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // Every HTTP-date form starts with a day name; without this check Date.parse reads "-1" as a year.
  if (!/^[A-Za-z]{3}/.test(trimmed)) return undefined;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
