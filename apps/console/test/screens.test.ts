/**
 * The developer's pages at desktop and phone widths in Chromium against a real server: the sign-in
 * placeholder names both kinds of key; an error after Run shows beside the button, in view; test
 * runs say they were priced but not charged, in the runs list and on the account page; and the
 * pages fit the screen. Screenshots are left in .screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminCall,
  createTenant,
  openPage,
  runToEnd,
  signIn,
  startServer,
  type TestServer,
} from "./harness.js";
import { isInViewport, overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];
/** A test key that made two runs, each priced $0.284, in an organization with $0.10. */
let testKey: string;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  const { organizationId } = await createTenant(url, "0.10");
  testKey = (await adminCall(url, `/organizations/${organizationId}/api-keys`, { environment: "test" })).key;
  await runToEnd(url, testKey);
  await runToEnd(url, testKey);
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

  it("marks test runs as priced but not charged in the runs list and on their page", async () => {
    await signIn(page, url, testKey);
    await page.getByRole("link", { name: "Runs" }).click();
    const costs = page.locator(".runs tbody td[data-label=Cost]");
    await page.waitForFunction(
      () => document.querySelectorAll(".runs tbody td[data-label=Cost]").length === 2,
    );
    expect(await costs.allTextContents()).toEqual(["$0.284 test, not charged", "$0.284 test, not charged"]);
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `runs-test-${width}`);
    await page.locator(".runs tbody a").first().click();
    const detail = page.getByRole("region", { name: "Run detail" });
    await detail.getByText("a test run: priced, not charged", { exact: false }).waitFor();
    await expect(overflowOf(page)).resolves.toEqual([]);
  });

  it("shows on the account page what test runs were priced at, beside the wallet's spend", async () => {
    await page.getByRole("link", { name: "Account" }).click();
    const priced = page.getByTestId("test-priced");
    await priced.waitFor();
    await expect(priced.textContent()).resolves.toBe("$0.568 for 2 succeeded runs; not charged");
    await expect(page.getByTestId("spent").textContent()).resolves.toBe("$0.00");
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `account-test-${width}`);
  });
});

describe("the pages", () => {
  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
