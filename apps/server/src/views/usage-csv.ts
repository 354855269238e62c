/**
 * An organization's usage report as CSV (`GET /v1/usage` with `Accept: text/csv`), RFC 4180: a
 * header row, then one line per row of the JSON report, in its order, every line ending in CRLF.
 * The columns are the row's fields in order, `runs` spread as `runs_total` … `runs_cancelled`;
 * money stays the JSON's decimal strings.
 */
import type { components } from "@refvid/api-types";

type Schemas = components["schemas"];
type Group = Schemas["AccountUsageGroup"];

const COLUMNS: readonly [string, (g: Group) => string | number][] = [
  ["group", (g) => g.group],
  ["environment", (g) => g.environment],
  ["runs_total", (g) => g.runs.total],
  ["runs_queued", (g) => g.runs.queued],
  ["runs_processing", (g) => g.runs.processing],
  ["runs_succeeded", (g) => g.runs.succeeded],
  ["runs_failed", (g) => g.runs.failed],
  ["runs_timeout", (g) => g.runs.timeout],
  ["runs_cancelled", (g) => g.runs.cancelled],
  ["failures", (g) => g.failures],
  ["billed_seconds", (g) => g.billed_seconds],
  ["spend_usd", (g) => g.spend_usd],
  ["priced_usd", (g) => g.priced_usd],
];

/**
 * One field, quoted by hand (RFC 4180, section 2): numbers, money, environments, dates, key ids and
 * built-in slugs never need it, but a catalog model's slug is the operator's text, so any field
 * with a comma, a quote or a line break is quoted, its quotes doubled. No library: this is all of it.
 */
function csvField(value: string | number): string {
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export function usageCsv(report: Schemas["AccountUsageReport"]): string {
  const lines = [
    COLUMNS.map(([name]) => name),
    ...report.data.map((group) => COLUMNS.map(([, field]) => csvField(field(group)))),
  ];
  return lines.map((fields) => `${fields.join(",")}\r\n`).join("");
}
