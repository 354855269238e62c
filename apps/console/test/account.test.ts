/**
 * The account page's money in Chromium against a real server, after real runs: the chart's bars
 * as uPlot drew them on its canvas (one per day with spend, live and test apart, as high as their
 * amounts, narrower as more days are shown) and its legend's figures; the key's budget, spent and
 * held against the amount; and the ledger, filtered by kind and paged with its cursor, with long
 * ids and reasons inside the page at desktop and phone widths. Screenshots are left in .screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHART_COLORS } from "../src/daily-spend.js";
import { barsOf } from "./canvas.js";
import {
  adminCall,
  createTenant,
  openPage,
  runToEnd,
  signIn,
  startServer,
  submitRun,
  type TestServer,
} from "./harness.js";
import { DESKTOP, overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

const CANVAS = ".spend-chart canvas";
const LONG_REASON = "Refund of https://billing.example.com/invoices/2026/11/acme-studios-0000000042";

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];
/** A live key with a budget of $5.00 a month: two runs ended ($0.568), one in flight ($0.284). */
let liveKey: string;
/** The days of the last 30 with live spend and with test prices, as the API counts them. */
let daysWithSpend: { live: number; test: number };

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  const tenant = await createTenant(url, "10.00", { budget: { amount_usd: "5", period: "month" } });
  liveKey = tenant.key;
  const org = `/organizations/${tenant.organizationId}`;
  const testKey = (await adminCall(url, `${org}/api-keys`, { environment: "test" })).key;
  // Three test runs priced $0.852 in all, two live runs charged $0.568: bars of 3 : 2.
  await Promise.all([
    ...[1, 2, 3].map(() => runToEnd(url, testKey)),
    runToEnd(url, liveKey),
    runToEnd(url, liveKey),
  ]);
  await submitRun(url, liveKey, "held [simulate:delay=600000]");
  // 8 ledger entries so far (a top-up, three for each run that ended, a reservation); 15 more.
  await adminCall(url, `${org}/adjustments`, { amount_usd: "0.01", reason: LONG_REASON });
  for (let i = 2; i <= 15; i++)
    await adminCall(url, `${org}/adjustments`, { amount_usd: "0.01", reason: `correction ${i}` });
  const usage = await (
    await fetch(`${url}/v1/usage?group_by=day`, { headers: { authorization: `Key ${liveKey}` } })
  ).json();
  const days = (environment: string, field: string) =>
    usage.data.filter((r: any) => r.environment === environment && r[field] !== "0.00").length;
  daysWithSpend = { live: days("live", "spend_usd"), test: days("test", "priced_usd") };
  ({ browser, page, pageErrors } = await openPage(url));
  await page.setViewportSize(DESKTOP);
  await signIn(page, url, liveKey);
  await page.getByRole("link", { name: "Account" }).click();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The chart's legend: the day shown, then each series' figure. */
const legend = () => page.locator(".spend-chart .u-legend .u-value").allTextContents();
const bars = () => barsOf(page, CANVAS, [CHART_COLORS.live, CHART_COLORS.test]);
const ledgerRows = () => page.locator("table.ledger tbody tr");

describe("the spend chart", () => {
  it("draws one bar a day with spend, live and test apart, as high as their amounts", async () => {
    await expect.poll(legend).toEqual(["all 30 days", "$0.568", "$0.852"]);
    await expect
      .poll(async () => (await bars()).map((b) => b.length))
      .toEqual([daysWithSpend.live, daysWithSpend.test]);
    const [live, test] = await bars();
    const [liveBar, testBar] = [live?.at(-1), test?.at(-1)];
    if (!liveBar || !testBar) throw new Error("no bars drawn");
    // $0.568 against $0.852: two thirds as high, to a pixel or so; side by side on the same day.
    expect(liveBar.height / testBar.height).toBeCloseTo(2 / 3, 1);
    expect(Math.abs(liveBar.height - (testBar.height * 2) / 3)).toBeLessThanOrEqual(2);
    expect(testBar.x - liveBar.x).toBeGreaterThan(0);
    expect(testBar.x - liveBar.x).toBeLessThan(liveBar.width + testBar.width);
  });

  it("shows the figures of the day pointed at in its legend", async () => {
    await page.locator(CANVAS).scrollIntoViewIfNeeded();
    const [live] = await bars();
    const bar = live?.at(-1);
    if (!bar) throw new Error("no live bar drawn");
    await page.mouse.move(bar.x, bar.y);
    const today = new Date().toLocaleDateString("en-US", { month: "short", day: "numeric", timeZone: "UTC" });
    await expect.poll(legend).toEqual([today, "$0.568", "$0.852"]);
    await page.mouse.move(0, 0);
    await expect.poll(legend).toEqual(["all 30 days", "$0.568", "$0.852"]);
  });

  it("shows 7 or 90 days on request: the same bars, narrower as the days grow", async () => {
    const widthOf = async () => (await bars())[0]?.at(-1)?.width ?? 0;
    const at30 = await widthOf();
    await page.getByRole("button", { name: "7 days" }).click();
    await expect.poll(legend).toEqual(["all 7 days", "$0.568", "$0.852"]);
    await expect.poll(widthOf).toBeGreaterThan(at30 * 2);
    await page.getByRole("button", { name: "90 days" }).click();
    await expect.poll(legend).toEqual(["all 90 days", "$0.568", "$0.852"]);
    await expect.poll(widthOf).toBeLessThan(at30);
    await expect
      .poll(async () => (await bars()).map((b) => b.length))
      .toEqual([daysWithSpend.live, daysWithSpend.test]);
    await page.getByRole("button", { name: "30 days" }).click();
    await expect.poll(legend).toEqual(["all 30 days", "$0.568", "$0.852"]);
  });
});

describe("the key's budget", () => {
  it("shows what was spent and what runs in flight hold against the amount, and when it resets", async () => {
    const meter = page.getByRole("meter", { name: "This key's budget" });
    await expect(meter.getAttribute("aria-valuetext")).resolves.toBe(
      "$0.568 spent + $0.284 held of $5.00 this month",
    );
    const account = await (
      await fetch(`${url}/v1/account`, { headers: { authorization: `Key ${liveKey}` } })
    ).json();
    const resets = new Date(account.api_key_budget.resets_at).toLocaleDateString("en-US", {
      timeZone: "UTC",
      dateStyle: "medium",
    });
    const words = await page.locator(".account .budget-words").textContent();
    expect(words).toContain("$4.148 left; resets ");
    expect(words).toContain(resets);
    const [whole, spent, held] = await Promise.all(
      [meter, meter.locator(".budget-spent"), meter.locator(".budget-held")].map((l) => l.boundingBox()),
    );
    if (!whole || !spent || !held) throw new Error("the budget bar is not drawn");
    expect(Math.abs(spent.width - whole.width * (0.568 / 5))).toBeLessThanOrEqual(1);
    expect(Math.abs(held.width - whole.width * (0.284 / 5))).toBeLessThanOrEqual(1);
    expect(held.x).toBeCloseTo(spent.x + spent.width, 0);
  });
});

describe("the ledger", () => {
  it("lists 20 entries newest first, then the rest with Load more", async () => {
    await expect.poll(() => ledgerRows().count()).toBe(20);
    const first = ledgerRows().first();
    await expect(first.locator("td[data-label=Kind]").textContent()).resolves.toBe("adjustment");
    await expect(first.locator("td[data-label=For]").textContent()).resolves.toBe("“correction 15” by admin");
    // The newest entry's balance is the wallet's: $10.00 - $0.568 + 15 × $0.01.
    await expect(first.locator("td[data-label='Balance after']").textContent()).resolves.toBe("$9.582");
    await expect(page.getByTestId("balance").textContent()).resolves.toBe("$9.582");
    await page.getByRole("button", { name: "Load more" }).click();
    await expect.poll(() => ledgerRows().count()).toBe(23);
    await expect(page.getByRole("button", { name: "Load more" }).count()).resolves.toBe(0);
    const kinds = await page.locator("table.ledger td[data-label=Kind]").allTextContents();
    // Below the adjustments, the runs' entries (their order as the runs went) and the top-up first made.
    expect(kinds.slice(0, 15)).toEqual(Array(15).fill("adjustment"));
    expect(kinds.slice(15, -1).sort()).toEqual([
      "charge",
      "charge",
      "release",
      "release",
      "reservation",
      "reservation",
      "reservation",
    ]);
    expect(kinds.at(-1)).toBe("top-up");
  });

  it("shows only the kinds picked", async () => {
    await page.getByLabel("Show").selectOption({ label: "Holds: reservations and releases" });
    await expect
      .poll(async () => (await page.locator("table.ledger td[data-label=Kind]").allTextContents()).sort())
      .toEqual(["release", "release", "reservation", "reservation", "reservation"]);
    await page.getByLabel("Show").selectOption({ label: "charge" });
    await expect
      .poll(() => page.locator("table.ledger td[data-label=Amount]").allTextContents())
      .toEqual(["-$0.284", "-$0.284"]);
    await page.getByLabel("Show").selectOption({ label: "All entries" });
    await expect.poll(() => ledgerRows().count()).toBe(20);
  });
});

describe.each(WIDTHS)("at %s width", (width, size) => {
  it("fits the page: long ids cut with their whole in a title, long reasons wrapped", async () => {
    await page.setViewportSize(size);
    await page.reload();
    await expect.poll(legend).toEqual(["all 30 days", "$0.568", "$0.852"]);
    await page.getByText(LONG_REASON, { exact: false }).waitFor();
    const runLink = page.locator("table.ledger td[data-label=For] a").first();
    expect(await runLink.getAttribute("title")).toMatch(/^run_/);
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `account-money-${width}`);
  });
});

describe("a chart that cannot load", () => {
  it("says so in its place, and the rest of the page works", async () => {
    await page.setViewportSize(DESKTOP);
    await page.route("**/assets/bar-chart-*.js", (route) => route.abort());
    await page.reload();
    await page.getByText(/^The chart could not be drawn/).waitFor();
    await expect.poll(() => ledgerRows().count()).toBe(20);
    await page.getByText("Days with runs, as a table").click();
    await expect(
      page.locator(".spend-days td[data-label='Live, spent']").allTextContents(),
    ).resolves.toContain("$0.568");
    await page.unroute("**/assets/bar-chart-*.js");
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
