/** Parsers for option values that commander hands over as strings; a bad value is a usage error (exit 2). */
import { InvalidArgumentError } from "commander";

/** Collects a repeatable option's values. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Repeatable `key=value`, into a record. */
export function keyValue(
  value: string,
  previous: Record<string, string> | undefined,
): Record<string, string> {
  const at = value.indexOf("=");
  if (at <= 0) throw new InvalidArgumentError("Use key=value.");
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError("Use a whole number of 1 or more.");
  return n;
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** An instant: ISO 8601 (`2026-05-01`, `2026-05-01T12:00:00Z`) or an age (`30m`, `2h`, `7d`) before `now`. */
export function instant(value: string, now = Date.now()): string {
  const age = /^(\d+)([smhdw])$/.exec(value);
  if (age) return new Date(now - Number(age[1]) * (UNITS[age[2] as string] as number)).toISOString();
  const time = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) {
    throw new InvalidArgumentError("Use a date (2026-05-01, 2026-05-01T12:00:00Z) or an age (30m, 2h, 7d).");
  }
  return new Date(time).toISOString();
}

/** A JSON object. */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError("Not valid JSON.");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgumentError("Use a JSON object, like '{\"seed\": 7}'.");
  }
  return parsed as Record<string, unknown>;
}
