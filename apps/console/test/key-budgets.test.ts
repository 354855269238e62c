/**
 * Key budgets on the operator's page in Chromium against a real server: set one on a key, see the
 * key's spend against it after a real run, change its amount and period, refuse an amount that is
 * not one, and remove it only once the operator confirms; each change read back from the admin API.
 * The keys table fits desktop and phone widths. Screenshots are left in .screenshots/.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  adminCall,
  createTenant,
  openPage,
  runToEnd,
  signInAsOperator,
  startServer,
  type TestServer,
} from "./harness.js";
import { DESKTOP, overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];
let key: string;
let organizationId: string;
let prefix: string;

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  ({ key, organizationId } = await createTenant(url, "10.00", { name: "render farm" }, "Budget Studios"));
  prefix = key.slice(0, 12);
  ({ browser, page, pageErrors } = await openPage(url));
  await page.setViewportSize(DESKTOP);
  await signInAsOperator(page, url);
  await page.getByRole("button", { name: "Budget Studios" }).click();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const detail = () => page.getByRole("region", { name: "Organization Budget Studios" });
const budgetOf = async () =>
  (await adminCall(url, `/organizations/${organizationId}/api-keys`)).data.find(
    (k: { key_prefix: string }) => k.key_prefix === prefix,
  ).budget;
const meter = () => detail().getByRole("meter", { name: `Budget of ${prefix}` });

describe("a key's budget on the operator's page", () => {
  it("sets a budget on a key that has none", async () => {
    await expect(budgetOf()).resolves.toBeNull();
    await detail()
      .getByRole("button", { name: `Set a budget of ${prefix}` })
      .click();
    await detail().getByLabel(`Budget in USD of ${prefix}`).fill("2.5");
    await detail().getByLabel(`Budget period of ${prefix}`).selectOption({ label: "a week" });
    await detail().getByRole("button", { name: "Save budget" }).click();
    await expect
      .poll(() => meter().getAttribute("aria-valuetext"))
      .toBe("$0.00 spent + $0.00 held of $2.50 this week");
    expect(await budgetOf()).toMatchObject({ amount_usd: "2.50", period: "week", spent_usd: "0.00" });
  });

  it("shows the key's spend against it after a run", async () => {
    await runToEnd(url, key);
    // The page loads the keys when the organization is opened.
    await page.reload();
    await page.getByRole("button", { name: "Budget Studios" }).click();
    await expect
      .poll(() => meter().getAttribute("aria-valuetext"))
      .toBe("$0.284 spent + $0.00 held of $2.50 this week");
    await expect(meter().getAttribute("aria-valuenow")).resolves.toBe("11");
    const [whole, spent] = await Promise.all([
      meter().boundingBox(),
      meter().locator(".budget-spent").boundingBox(),
    ]);
    if (!whole || !spent) throw new Error("the budget bar is not drawn");
    expect(Math.abs(spent.width - whole.width * (0.284 / 2.5))).toBeLessThanOrEqual(1);
    const { resets_at } = await budgetOf();
    const day = new Date(resets_at).toLocaleDateString("en-US", { timeZone: "UTC", dateStyle: "medium" });
    await detail().getByText(`$2.216 left; resets ${day}`, { exact: false }).waitFor();
  });

  it("refuses an amount that is not one, and changes nothing", async () => {
    await detail()
      .getByRole("button", { name: `Edit budget of ${prefix}` })
      .click();
    await expect(detail().getByLabel(`Budget in USD of ${prefix}`).inputValue()).resolves.toBe("2.50");
    await detail().getByLabel(`Budget in USD of ${prefix}`).fill("ten dollars");
    await detail().getByRole("button", { name: "Save budget" }).click();
    await detail()
      .getByRole("alert")
      .getByText(/^Enter a budget in USD above 0/)
      .waitFor();
    expect(await budgetOf()).toMatchObject({ amount_usd: "2.50", period: "week" });
  });

  it("changes the amount and the period", async () => {
    await detail().getByLabel(`Budget in USD of ${prefix}`).fill("1");
    await detail().getByLabel(`Budget period of ${prefix}`).selectOption({ label: "a day" });
    await detail().getByRole("button", { name: "Save budget" }).click();
    await expect
      .poll(() => meter().getAttribute("aria-valuetext"))
      .toBe("$0.284 spent + $0.00 held of $1.00 today");
    expect(await budgetOf()).toMatchObject({ amount_usd: "1.00", period: "day", spent_usd: "0.284" });
  });

  it.each(WIDTHS)("fits the keys table at %s width", async (width, size) => {
    await page.setViewportSize(size);
    await meter().scrollIntoViewIfNeeded();
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `operator-budget-${width}`);
  });

  it("removes the budget only once the operator confirms", async () => {
    await page.setViewportSize(DESKTOP);
    await detail()
      .getByRole("button", { name: `Remove budget of ${prefix}` })
      .click();
    const question = detail().getByText(`Remove the budget of ${prefix}… ($1.00 a day)?`, { exact: false });
    await question.waitFor();
    await saveScreenshot(page, "operator-budget-remove-desktop");
    await detail().getByRole("button", { name: "Keep it" }).click();
    await meter().waitFor();
    expect(await budgetOf()).toMatchObject({ amount_usd: "1.00" });

    await detail()
      .getByRole("button", { name: `Remove budget of ${prefix}` })
      .click();
    await detail().getByRole("button", { name: "Yes, remove the budget" }).click();
    await detail()
      .getByRole("button", { name: `Set a budget of ${prefix}` })
      .waitFor();
    await expect(meter().count()).resolves.toBe(0);
    await expect(budgetOf()).resolves.toBeNull();
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
