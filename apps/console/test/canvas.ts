/**
 * What a canvas chart drew, read back from its pixels: the bars of each colour, found as runs of
 * columns that hold pixels of exactly that colour (a bar's inside; its anti-aliased edges and the
 * grey axes and grid match none).
 */
import type { Page } from "playwright-core";

/** One bar as drawn, in the page's CSS pixels. */
export interface DrawnBar {
  /** The middle of the bar, where a pointer is on it. */
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The bars of each of `colors` (`#rrggbb`) on the canvas at `selector`, left to right. */
export function barsOf(page: Page, selector: string, colors: readonly string[]): Promise<DrawnBar[][]> {
  return page.evaluate(
    ({ selector, colors }) => {
      const canvas = document.querySelector<HTMLCanvasElement>(selector);
      const context = canvas?.getContext("2d");
      if (!canvas || !context) return colors.map(() => []);
      const { width, height } = canvas;
      const pixels = context.getImageData(0, 0, width, height).data;
      const box = canvas.getBoundingClientRect();
      const scale = box.width / width;
      return colors.map((hex) => {
        const [r, g, b] = [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16));
        const near = (i: number, want: number | undefined) => Math.abs((pixels[i] ?? 0) - (want ?? 0)) <= 2;
        /** Each column's topmost and bottommost pixel of the colour, or undefined. */
        const columns = Array.from({ length: width }, (_, x) => {
          let span: [number, number] | undefined;
          for (let y = 0; y < height; y++) {
            const i = (y * width + x) * 4;
            if (near(i, r) && near(i + 1, g) && near(i + 2, b) && pixels[i + 3] === 255) {
              span = [span?.[0] ?? y, y];
            }
          }
          return span;
        });
        const bars = [];
        let start = 0;
        while (start < width) {
          if (!columns[start]) {
            start++;
            continue;
          }
          let [end, top, bottom] = [start, height, 0];
          for (let span = columns[end]; span; span = columns[end]) {
            [top, bottom] = [Math.min(top, span[0]), Math.max(bottom, span[1])];
            end++;
          }
          bars.push({
            x: box.left + ((start + end) / 2) * scale,
            y: box.top + ((top + bottom + 1) / 2) * scale,
            width: (end - start) * scale,
            height: (bottom - top + 1) * scale,
          });
          start = end;
        }
        return bars;
      });
    },
    { selector, colors },
  );
}
