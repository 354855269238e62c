/**
 * The account page's spend over time: for each UTC day of the last 7, 30 or 90, what the
 * organization's live runs took from the wallet and what its test runs were priced at (they take
 * nothing), as bars, with the totals below and the days that had any as a table. The chart's code
 * (uPlot) loads with the first chart drawn, in a chunk of its own: the console's other pages never
 * wait for it, and a chart that cannot load or draw leaves the rest of the page working.
 */
import type { RefvidClient } from "@refvid/client";
import { Component, lazy, type ReactNode, Suspense, useCallback, useMemo, useState } from "react";
import { unwrap } from "./admin.js";
import type { BarSeries } from "./bar-chart.js";
import { barHeight, CHART_COLORS, type DaySpend, dailySpend, daysWindow, lastDays } from "./daily-spend.js";
import { ErrorMessage } from "./errors.js";
import { useFreshLoad } from "./fresh-load.js";
import { sumUsd, usd } from "./money.js";

const BarChart = lazy(async () => ({ default: (await import("./bar-chart.js")).BarChart }));

/** The chart's failure in words, in its place; the totals and the table stay. */
class ChartBoundary extends Component<{ children: ReactNode }, { failure: string | null }> {
  override state = { failure: null };
  static getDerivedStateFromError(error: unknown) {
    return { failure: error instanceof Error ? error.message : String(error) };
  }
  override render() {
    if (this.state.failure === null) return this.props.children;
    return (
      <p className="error" role="alert">
        The chart could not be drawn ({this.state.failure}); the days are in the table below.
      </p>
    );
  }
}

const RANGES = [7, 30, 90] as const;
type Range = (typeof RANGES)[number];
const CHART_HEIGHT = 220;

const dayLabel = (day: string): string =>
  new Date(`${day}T00:00:00Z`).toLocaleDateString(undefined, {
    month: "short",
    day: "numeric",
    timeZone: "UTC",
  });
const yTick = (value: number): string => `$${value.toLocaleString("en-US", { maximumFractionDigits: 3 })}`;

function seriesOf(days: readonly DaySpend[]): BarSeries[] {
  const series = (label: string, color: string, amountOf: (d: DaySpend) => string): BarSeries => ({
    label,
    color,
    heights: days.map((d) => barHeight(amountOf(d))),
    text: days.map((d) => usd(amountOf(d))),
    total: usd(sumUsd(days.map(amountOf))),
  });
  return [
    series("Live runs, spent", CHART_COLORS.live, (d) => d.live),
    series("Test runs, priced", CHART_COLORS.test, (d) => d.test),
  ];
}

/** The days that had any spend or price, newest first. */
function DaysTable({ days }: { days: readonly DaySpend[] }) {
  const shown = days.filter((d) => barHeight(d.live) !== null || barHeight(d.test) !== null).reverse();
  return (
    <details className="spend-days">
      <summary>Days with runs, as a table</summary>
      <div className="table-wrap">
        <table className="compact">
          <caption className="visually-hidden">Spend by UTC day, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              <th scope="col">Live runs, spent</th>
              <th scope="col">Test runs, priced</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((d) => (
              <tr key={d.day}>
                <td data-label="Day (UTC)">{d.day}</td>
                <td data-label="Live, spent">{usd(d.live)}</td>
                <td data-label="Test, priced">{usd(d.test)}</td>
              </tr>
            ))}
            {shown.length === 0 ? (
              <tr>
                <td colSpan={3}>No runs cost anything in these days.</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </div>
    </details>
  );
}

/** Loads again whenever `generation` moves past 0 (the account page's Refresh). */
export function SpendChart({ client, generation }: { client: RefvidClient; generation: number }) {
  const [range, setRange] = useState<Range>(30);
  const [days, setDays] = useState<DaySpend[] | null>(null);
  const load = useCallback(async () => {
    const today = new Date().toISOString().slice(0, 10);
    const query = { group_by: "day" as const, ...daysWindow(today, range) };
    const report = await unwrap(client.api.GET("/v1/usage", { params: { query } }));
    // The client asks for JSON; CSV comes only to those who ask for it.
    if (typeof report === "string") throw new Error("GET /v1/usage answered CSV where JSON was asked for.");
    return dailySpend(report, lastDays(today, range));
  }, [client, range]);
  const { busy, error } = useFreshLoad(load, setDays, generation);

  const series = useMemo(() => (days ? seriesOf(days) : []), [days]);
  const labels = useMemo(() => days?.map((d) => dayLabel(d.day)) ?? [], [days]);
  return (
    <section aria-labelledby="spend-heading" className="spend" aria-busy={busy}>
      <h2 id="spend-heading">Spend over time</h2>
      <fieldset className="range">
        <legend className="visually-hidden">Days shown</legend>
        {RANGES.map((r) => (
          <button
            key={r}
            type="button"
            className={r === range ? undefined : "secondary"}
            aria-pressed={r === range}
            onClick={() => setRange(r)}
          >
            {r} days
          </button>
        ))}
      </fieldset>
      <ErrorMessage error={error} />
      {days ? (
        <figure className="spend-chart">
          <ChartBoundary>
            <Suspense fallback={<div className="bar-chart" />}>
              <BarChart
                labels={labels}
                allDays={`all ${days.length} days`}
                series={series}
                height={CHART_HEIGHT}
                yTick={yTick}
              />
            </Suspense>
          </ChartBoundary>
          <figcaption>
            By UTC day: what live runs took from the wallet, and what test runs were priced at (they take
            nothing). Point at a day for its figures; the legend shows the {days.length} days' totals
            otherwise.
          </figcaption>
          <DaysTable days={days} />
        </figure>
      ) : null}
    </section>
  );
}
