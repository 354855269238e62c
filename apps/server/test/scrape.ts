/**
 * Reads a Prometheus text exposition (format 0.0.4) for the metrics tests. The parser is
 * parse-prometheus-text-format (its sample grammar is ported from the official Python client's
 * parser; it throws on a malformed line); `checkExposition` adds what it leaves to the format:
 * names, values, HELP and TYPE on every family, no family twice.
 */
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A float as Prometheus reads one (Go's ParseFloat: NaN and Inf in any case). */
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf(?:inity)?|nan)$/i;
const TYPES = new Set(["COUNTER", "GAUGE", "HISTOGRAM", "SUMMARY"]);

export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The families of a scrape; throws naming the first thing Prometheus would not take. */
export function checkExposition(text: string): PrometheusFamily[] {
  if (!text.endsWith("\n")) throw new Error("an exposition ends with a line feed");
  const families = parsePrometheusTextFormat(text);
  const seen = new Set<string>();
  for (const family of families) {
    if (seen.has(family.name)) throw new Error(`${family.name} appears twice`);
    seen.add(family.name);
    if (!METRIC_NAME.test(family.name)) throw new Error(`bad metric name ${family.name}`);
    if (!TYPES.has(family.type)) throw new Error(`${family.name} has no TYPE`);
    if (!family.help) throw new Error(`${family.name} has no HELP`);
  }
  const sampleNames = new Set<string>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const name = /^[^{ ]+/.exec(line)?.[0] ?? "";
    if (!METRIC_NAME.test(name)) throw new Error(`bad sample name in: ${line}`);
    const value = line.slice(line.lastIndexOf(" ") + 1);
    if (!FLOAT.test(value)) throw new Error(`bad value in: ${line}`);
    sampleNames.add(name);
  }
  for (const name of sampleNames) {
    for (const sample of samplesOf(text, name)) {
      for (const label of Object.keys(sample.labels))
        if (!LABEL_NAME.test(label)) throw new Error(`bad label name ${label} on ${name}`);
    }
  }
  return families;
}

/**
 * Every sample named exactly `name` (a counter or gauge, or a histogram's `_count`, `_sum` or
 * `_bucket`), with all its labels: those lines parsed on their own, as one untyped family.
 */
export function samplesOf(text: string, name: string): Sample[] {
  const lines = text.split("\n").filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));
  const [family] = parsePrometheusTextFormat(`${lines.join("\n")}\n`);
  return (family?.metrics ?? []).map((m) => ({ labels: m.labels ?? {}, value: Number(m.value) }));
}

/** The value of the sample named `name` with exactly these labels; undefined when there is none. */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const wanted = JSON.stringify(Object.entries(labels).sort());
  return samplesOf(text, name).find((s) => JSON.stringify(Object.entries(s.labels).sort()) === wanted)?.value;
}
