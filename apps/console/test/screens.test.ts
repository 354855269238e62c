/**
 * The developer's pages at desktop and phone widths in Chromium against a real server: the sign-in
 * placeholder names both kinds of key; an error after Run shows beside the button, in view; and
 * the pages fit the screen. Screenshots are left in .screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, openPage, signIn, startServer, type TestServer } from "./harness.js";
import { isInViewport, overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  ({ browser, page, pageErrors } = await openPage(url));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe.each(WIDTHS)("at %s width", (width, size) => {
  beforeAll(async () => {
    await page.setViewportSize(size);
  });

  it("asks for a test or a live key on sign-in", async () => {
    await page.goto(`${url}/console`);
    const signOut = page.getByRole("button", { name: "Sign out" });
    if (await signOut.isVisible()) await signOut.click();
    await expect(page.getByLabel("API key").getAttribute("placeholder")).resolves.toBe(
      "sk-test-… or sk-live-…",
    );
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `sign-in-${width}`);
  });

  it("shows an error after Run beside the button, in view", async () => {
    // A live key with $0.10, which covers no model-d run.
    const { key } = await createTenant(url, "0.10");
    await signIn(page, url, key);
    await page
      .getByRole("form", { name: "Run a model" })
      .getByLabel("Model", { exact: true })
      .selectOption({ label: "model-d — lab-d/model-d/reference-to-video" });
    await page.getByLabel("prompt").fill("A slow dolly shot");
    await page.getByLabel("image_urls").fill("https://example.com/refs/cat.png");
    const run = page.getByRole("button", { name: "Run", exact: true });
    await run.click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Not enough balance: this run needs \$0\.568/);
    // The page scrolls once the alert is drawn: wait for that, then check.
    await page.waitForFunction(() => {
      const box = document.querySelector("[role=alert]")?.getBoundingClientRect();
      return box !== undefined && box.top >= 0 && box.bottom <= innerHeight;
    });
    expect(await isInViewport(alert)).toBe(true);
    expect(await isInViewport(run)).toBe(true);
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `run-error-${width}`);
  });
});

describe("the pages", () => {
  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
