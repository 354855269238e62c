/** Amounts of USD as the console shows them; the arithmetic is @refvid/core's, in integer micro-USD. */
import { formatUsd, parseUsd } from "@refvid/core";

/** An amount as shown, thousands grouped and its sign first: `$1,000,025.00`, `-$0.016`. */
export function usd(amount: string): string {
  const negative = amount.startsWith("-");
  const [whole = "", fraction] = (negative ? amount.slice(1) : amount).split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${negative ? "-" : ""}$${grouped}${fraction === undefined ? "" : `.${fraction}`}`;
}

/** `a + b`, both decimal USD strings; undefined when either is not one. */
export function addUsd(a: string, b: string): string | undefined {
  const [x, y] = [parseUsd(a), parseUsd(b)];
  return x === null || y === null ? undefined : formatUsd(x + y);
}

/** The sum of decimal USD strings; those that are not one count nothing. */
export function sumUsd(amounts: readonly string[]): string {
  return formatUsd(amounts.reduce((total, amount) => total + (parseUsd(amount) ?? 0), 0));
}

/** A positive amount as typed (`25`, `25.5`), in the API's form (`25.00`, `25.50`); else undefined. */
export function amountOf(text: string): string | undefined {
  const micros = parseUsd(text.trim());
  return micros === null || micros <= 0 ? undefined : formatUsd(micros);
}
