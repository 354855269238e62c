/**
 * Money in integer micro-USD (1 USD = 1,000,000). Amounts never touch floating point: they are
 * parsed from and formatted to decimal strings.
 */

/** An amount of US dollars in millionths, always a safe integer. */
export type Micros = number;

export const MICROS_PER_USD = 1_000_000;

const DECIMAL = /^(-)?(\d+)(?:\.(\d{1,6}))?$/;

/** Parses a decimal USD string ("100.00", "0.072") into micros; null if it is not one. */
export function parseUsd(text: string): Micros | null {
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const [, sign, whole = "0", fraction = ""] = match;
  const micros = Number(whole) * MICROS_PER_USD + Number(fraction.padEnd(6, "0"));
  if (!Number.isSafeInteger(micros)) return null;
  return sign ? -micros : micros;
}

/** Formats micros as a decimal USD string with 2 to 6 decimals: 360000 -> "0.36", 294000 -> "0.294". */
export function formatUsd(micros: Micros): string {
  assertMicros(micros);
  const sign = micros < 0 ? "-" : "";
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD)
    .padStart(6, "0")
    .replace(/0{1,4}$/, "");
  return `${sign}${whole}.${fraction.padEnd(2, "0")}`;
}

/** Throws when a value is not a safe integer amount of micros: a bug, never user input. */
export function assertMicros(value: number): asserts value is Micros {
  if (!Number.isSafeInteger(value)) throw new RangeError(`not an integer amount of micro-USD: ${value}`);
}
