/** Human output: tables (cli-table3), runs, models, money and times. */
import type { Model, Run } from "@refvid/client";
import Table from "cli-table3";
import type { Colors } from "./io.js";

type Cell = string | number | null | undefined;

function cell(value: Cell): string {
  return value === null || value === undefined || value === "" ? "-" : String(value);
}

/** A table with a header row; borders are plain so that it pastes cleanly. */
export function table(c: Colors, head: string[], rows: Cell[][]): string {
  const t = new Table({
    head: head.map((h) => c.bold(h)),
    style: { head: [], border: [], compact: true },
    chars: { mid: "", "left-mid": "", "mid-mid": "", "right-mid": "" },
  });
  for (const row of rows) t.push(row.map(cell));
  return t.toString();
}

/** Labelled values, one a line (a value's own lines are indented under it). */
export function details(c: Colors, rows: [string, Cell][]): string {
  const width = Math.max(...rows.map(([label]) => label.length));
  const indent = " ".repeat(width + 2);
  return rows
    .map(([label, value]) => `${c.dim(label.padEnd(width))}  ${cell(value).replaceAll("\n", `\n${indent}`)}`)
    .join("\n");
}

export function colorStatus(c: Colors, status: string): string {
  if (status === "succeeded" || status === "delivered") return c.green(status);
  if (status === "failed" || status === "timeout") return c.red(status);
  if (status === "cancelled") return c.yellow(status);
  return c.cyan(status);
}

export function seconds(ms: number | null | undefined): string | undefined {
  return ms === null || ms === undefined ? undefined : `${(ms / 1000).toFixed(1)} s`;
}

export function usd(amount: string | null | undefined): string | undefined {
  return amount === null || amount === undefined ? undefined : `${amount} USD`;
}

/** The short name of a model slug: `lab-d/model-d/reference-to-video` → `model-d`. */
export function shortModel(slug: string): string {
  return slug.split("/")[1] ?? slug;
}

export function videoUrl(run: Run): string | undefined {
  return run.output?.videos[0]?.url;
}

export function runDetails(c: Colors, run: Run): string {
  const metadata = Object.entries(run.metadata ?? {}).map(([k, v]) => `${k}=${v}`);
  return details(c, [
    ["run", run.run_id],
    ["model", run.endpoint],
    ["status", colorStatus(c, run.status)],
    ["progress", run.progress === null ? undefined : `${Math.round(run.progress * 100)}%`],
    ["environment", run.environment],
    ["created", run.created_at],
    ["completed", run.completed_at],
    ["elapsed", seconds(run.elapsed_ms)],
    ["billed", run.billing ? `${run.billing.amount} USD (${run.billing.billable_seconds} s)` : undefined],
    ["video", videoUrl(run)],
    ["poster", run.output?.videos[0]?.thumbnail_url],
    ["error", run.error ? `${run.error.message} (${run.error.type})` : undefined],
    ["metadata", metadata.join(", ")],
  ]);
}

/** The closing line of a run followed to its end. */
export function runOutcome(c: Colors, run: Run): string {
  if (run.status === "succeeded") {
    const billed = run.billing
      ? `, ${run.billing.billable_seconds} s of video, ${run.billing.amount} USD`
      : "";
    return `${c.green("✔")} ${run.run_id} succeeded in ${seconds(run.elapsed_ms) ?? "?"}${billed}`;
  }
  const reason = run.error ? `: ${run.error.message} (${run.error.type})` : "";
  return `${c.red("✖")} ${run.run_id} ended ${colorStatus(c, run.status)}${reason}`;
}

export function runRows(runs: readonly Run[], c: Colors): Cell[][] {
  return runs.map((run) => [
    run.run_id,
    shortModel(run.endpoint),
    colorStatus(c, run.status),
    run.created_at.replace("T", " ").slice(0, 19),
    seconds(run.elapsed_ms),
    run.billing?.amount,
  ]);
}

type Tier = Model["pricing"]["tiers"][number];

/** A tier's price in its unit: `0.071 USD/s`, or `0.50 USD a run` for a model priced per run. */
export function tierPrice(tier: Tier): string {
  return tier.usd_per_run !== undefined ? `${tier.usd_per_run} USD a run` : `${tier.usd_per_second} USD/s`;
}

/** `0.071–0.106 USD/s` (or `USD a run`): the range of a model's prices. */
export function priceRange(model: Model): string {
  const perRun = model.pricing.unit === "run";
  const amountOf = (t: Tier) => (perRun ? t.usd_per_run : t.usd_per_second);
  const prices = model.pricing.tiers.map((t) => Number(amountOf(t)));
  const low = amountOf(model.pricing.tiers[prices.indexOf(Math.min(...prices))] as Tier);
  const high = amountOf(model.pricing.tiers[prices.indexOf(Math.max(...prices))] as Tier);
  const unit = perRun ? "USD a run" : "USD/s";
  return low === high ? `${low} ${unit}` : `${low}–${high} ${unit}`;
}

/** What a price preview or a run's billing says: `4.16 USD for 8 s at 0.52 USD/s`, or a run's price. */
export function chargeText(price: {
  amount: string;
  billable_seconds: number;
  unit_price: string;
  unit?: string;
}): string {
  return price.unit === "run"
    ? `${price.amount} USD a run (${price.billable_seconds} s)`
    : `${price.amount} USD for ${price.billable_seconds} s at ${price.unit_price} USD/s`;
}
