/**
 * Bars per day drawn by uPlot (a canvas chart of about 50 kB; see docs/decisions.md, "Console"),
 * its series side by side on each day, resized with its box. uPlot's legend under the canvas shows
 * the hovered day's figures as given in `text`, or the totals when no day is hovered: never the
 * floats the bars are drawn from.
 */
import { useEffect, useRef } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";

export interface BarSeries {
  label: string;
  /** A solid CSS colour: the bars' fill and the legend's marker. */
  color: string;
  /** The bar of each day, in the y axis' unit; null draws none. */
  heights: readonly (number | null)[];
  /** What the legend says of each day's figure. */
  text: readonly string[];
  /** What the legend says while no day is hovered: the figure of all days. */
  total: string;
}

/** Day ticks: every day, or every 2nd, 7th, … as the width allows. */
const DAY_STEPS = [1, 2, 5, 7, 10, 14, 15, 30];
/** Two series fill 80 % of a day's width, each bar at most 40 px wide. */
const BAR_SIZE: [number, number] = [0.4, 40];

interface Props {
  /** What each day's tick and legend say. */
  labels: readonly string[];
  /** What the legend says for the day while none is hovered. */
  allDays: string;
  series: readonly BarSeries[];
  height: number;
  /** A y axis tick as shown. */
  yTick: (value: number) => string;
}

function options(width: number, { labels, allDays, series, height, yTick }: Props): uPlot.Options {
  return {
    width,
    height,
    // Days are slots 0…n-1, half a slot of room at each end for their bars.
    scales: {
      x: { time: false, range: [-0.5, labels.length - 0.5] },
      y: { range: (_u, _min, max) => [0, max || 1] },
    },
    axes: [
      {
        incrs: DAY_STEPS,
        values: (_u, splits) => splits.map((i) => labels[i] ?? ""),
        grid: { show: false },
      },
      { values: (_u, splits) => splits.map(yTick), size: 60 },
    ],
    cursor: { drag: { x: false, y: false }, points: { show: false } },
    series: [
      { label: "Day", value: (_u, _v, _s, idx) => (idx === null ? allDays : (labels[idx] ?? "")) },
      ...series.map((s, i) => ({
        label: s.label,
        fill: s.color,
        stroke: s.color,
        width: 0,
        points: { show: false },
        paths: uPlot.paths.bars?.({ size: BAR_SIZE, align: i === 0 ? -1 : 1 }),
        value: (_u: uPlot, _v: number | null, _s: number, idx: number | null) =>
          idx === null ? s.total : (s.text[idx] ?? ""),
      })),
    ],
  };
}

/**
 * The chart, made anew when its figures change. The box is measured for its width: a page that
 * is hidden measures 0, and the chart takes its width once shown.
 */
export function BarChart({ labels, allDays, series, height, yTick }: Props) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const data: uPlot.AlignedData = [labels.map((_, i) => i), ...series.map((s) => [...s.heights])];
    const plot = new uPlot(
      options(element.clientWidth, { labels, allDays, series, height, yTick }),
      data,
      element,
    );
    const resized = new ResizeObserver(() => {
      if (element.clientWidth > 0 && element.clientWidth !== plot.width)
        plot.setSize({ width: element.clientWidth, height });
    });
    resized.observe(element);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [labels, allDays, series, height, yTick]);
  return <div ref={box} className="bar-chart" />;
}
