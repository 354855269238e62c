/**
 * What the console's screenshot tests check of a page as laid out: that it fits the viewport's
 * width, that an element is in view; and the screenshots themselves, left in .screenshots/ (not
 * committed) for a person to look at.
 */
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";

export const DESKTOP = { width: 1280, height: 800 } as const;
export const PHONE = { width: 390, height: 844 } as const;
export const WIDTHS = [
  ["desktop", DESKTOP],
  ["phone", PHONE],
] as const;

export const SCREENSHOT_DIR = join(import.meta.dirname, "../.screenshots");

/** A full-page screenshot at `.screenshots/<name>.png`. */
export async function saveScreenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * What sticks out sideways: the page's scroll width past the viewport's, and each shown cell,
 * button, link, field or code inside `main` whose box leaves the viewport's width or the box it
 * scrolls in (a table's far cells, out of sight in its wrapper). What an ancestor clips away (a
 * visually hidden heading, a value cut with an ellipsis) is not shown, so it counts for nothing.
 * Empty when everything fits.
 */
export function overflowOf(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const scrollWidth = document.scrollingElement?.scrollWidth ?? 0;
    if (scrollWidth > innerWidth) found.push(`the page is ${scrollWidth} px wide in ${innerWidth}`);
    const viewport = { left: 0, right: innerWidth };
    /** The box the element sticks out of, if any: the viewport or an ancestor that scrolls. */
    const stuckOutOf = (element: Element) => {
      const box = element.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) return undefined;
      let [left, right] = [box.left, box.right];
      const bounds: { name: string; left: number; right: number }[] = [];
      for (let up = element.parentElement; up; up = up.parentElement) {
        const overflow = getComputedStyle(up).overflowX;
        const edge = up.getBoundingClientRect();
        if (overflow === "hidden" || overflow === "clip") {
          [left, right] = [Math.max(left, edge.left), Math.min(right, edge.right)];
        } else if (overflow === "auto" || overflow === "scroll") {
          bounds.push({
            name: `its scrolling <${up.tagName.toLowerCase()}>`,
            left: edge.left,
            right: edge.right,
          });
        }
      }
      if (right - left < 2) return undefined;
      const out = [...bounds, { name: "the viewport", ...viewport }].find(
        (b) => left < b.left - 0.5 || right > b.right + 0.5,
      );
      return out && `${out.name} (${Math.round(out.left)}..${Math.round(out.right)})`;
    };
    for (const element of document.querySelectorAll(
      "main :is(td, th, button, a, input, select, textarea, code)",
    )) {
      const out = stuckOutOf(element);
      if (out) {
        const text = (element.textContent ?? "").trim().slice(0, 40);
        const box = element.getBoundingClientRect();
        found.push(
          `<${element.tagName.toLowerCase()}> "${text}" at ${Math.round(box.left)}..${Math.round(box.right)} leaves ${out}`,
        );
      }
    }
    return found;
  });
}

/** Whether the element's box lies wholly inside the viewport. */
export async function isInViewport(locator: Locator): Promise<boolean> {
  const box = await locator.boundingBox();
  const size = locator.page().viewportSize();
  if (!box || !size) return false;
  return box.x >= 0 && box.y >= 0 && box.x + box.width <= size.width && box.y + box.height <= size.height;
}
