/**
 * The operator's page in Chromium against a real server: create an organization, top it up and
 * create a key, each step that cannot be taken back (a top-up, a revoke) asked for first, with a
 * top-up's effect on the balance shown before it is applied; and the tables fit desktop and phone
 * widths with long values, whole in their titles. Screenshots are left in .screenshots/.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminCall, openPage, ROOT, signInAsOperator, startServer, type TestServer } from "./harness.js";
import { DESKTOP, overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

const LONG_NAME = "a-key-name-with-no-space-in-it-that-runs-on-and-on-past-any-column";

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  ({ browser, page, pageErrors } = await openPage(url));
  await page.setViewportSize(DESKTOP);
  await signInAsOperator(page, url);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const detail = () => page.getByRole("region", { name: "Organization Acme Studios" });
const balanceOf = async (id: string) =>
  (await adminCall(url, `/organizations/${id}`)).wallet.balance_usd as string;

describe("the operator's page", () => {
  let organizationId: string;

  it("creates an organization and tops it up after showing the balance before and after", async () => {
    await page.getByLabel("Name").fill("Acme Studios");
    await page.getByRole("button", { name: "Create organization" }).click();
    await detail().waitFor();
    organizationId = (await adminCall(url, "/organizations?limit=100")).data[0].organization_id;

    await detail().getByLabel("Amount (USD)").fill("25");
    await detail().getByLabel("Note").fill("invoice 42");
    await detail().getByRole("button", { name: "Add funds" }).click();
    const confirm = detail().getByRole("region", { name: "Confirm the top-up" });
    await confirm.waitFor();
    await expect(confirm.getByTestId("top-up-effect").textContent()).resolves.toBe("Balance $0.00 → $25.00");
    // Asked, not done: the wallet is as it was until the operator confirms.
    expect(await balanceOf(organizationId)).toBe("0.00");
    await confirm.getByRole("button", { name: "Add $25.00" }).click();
    await detail().getByRole("cell", { name: "invoice 42" }).waitFor();
    await detail().getByText("balance $25.00").waitFor();
    expect(await balanceOf(organizationId)).toBe("25.00");
    await confirm.waitFor({ state: "detached" });
  });

  it("asks before a top-up of a million dollars, and adds nothing when the operator changes it", async () => {
    await detail().getByLabel("Amount (USD)").fill("1000000");
    await detail().getByRole("button", { name: "Add funds" }).click();
    const confirm = detail().getByRole("region", { name: "Confirm the top-up" });
    await confirm.waitFor();
    await expect(confirm.getByTestId("top-up-effect").textContent()).resolves.toBe(
      "Balance $25.00 → $1,000,025.00",
    );
    await expect(confirm.getByRole("button", { name: "Add $1,000,000.00" }).isVisible()).resolves.toBe(true);
    await saveScreenshot(page, "operator-top-up-confirm-desktop");
    await confirm.getByRole("button", { name: "Change" }).click();
    await confirm.waitFor({ state: "detached" });
    // Typing another amount also takes the question back: what is confirmed is what is shown.
    await detail().getByRole("button", { name: "Add funds" }).click();
    await confirm.waitFor();
    await detail().getByLabel("Amount (USD)").fill("10");
    await confirm.waitFor({ state: "detached" });
    expect(await balanceOf(organizationId)).toBe("25.00");
    const topUps = await adminCall(url, `/organizations/${organizationId}/top-ups`);
    expect(topUps.data.map((t: any) => t.amount_usd)).toEqual(["25.00"]);
  });

  it("creates a key, and revokes it only once the operator confirms", async () => {
    await detail().getByLabel("Name").fill(LONG_NAME);
    await detail().getByRole("button", { name: "Create key" }).click();
    const secret = await detail().getByTestId("new-key").textContent();
    expect(secret).toMatch(/^sk-live-/);
    const account = () => fetch(`${url}/v1/account`, { headers: { authorization: `Key ${secret}` } });
    expect((await account()).status).toBe(200);
    if (process.env.REFVID_UPDATE_SCREENSHOTS === "1")
      await page.screenshot({ path: join(ROOT, "docs/images/console-operator.png"), fullPage: true });

    await detail()
      .getByRole("button", { name: /^Revoke / })
      .click();
    const yes = detail().getByRole("button", { name: /^Yes, revoke / });
    await yes.waitFor();
    await expect(
      detail()
        .getByText(/^Revoke sk-live-.*cannot be undone\.$/)
        .count(),
    ).resolves.toBe(1);
    expect((await account()).status).toBe(200);
    await saveScreenshot(page, "operator-revoke-confirm-desktop");
    await detail().getByRole("button", { name: "Keep it" }).click();
    await detail()
      .getByRole("button", { name: /^Revoke / })
      .waitFor();
    expect((await account()).status).toBe(200);

    await detail()
      .getByRole("button", { name: /^Revoke / })
      .click();
    await yes.click();
    await detail()
      .getByText(/^revoked /)
      .waitFor();
    expect((await account()).status).toBe(401);
  });

  it("sets the organization's queue weight and a key's priority", async () => {
    await detail().getByRole("spinbutton", { name: "Queue weight" }).fill("3");
    await detail().getByRole("button", { name: "Set weight" }).click();
    await detail().getByText("(now 3)").waitFor();
    expect((await adminCall(url, `/organizations/${organizationId}`)).queue_weight).toBe(3);

    const before = await detail().getByTestId("new-key").textContent();
    await detail().getByLabel("Name").fill("urgent");
    await detail().getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => detail().getByTestId("new-key").textContent()).not.toBe(before);
    const prefix = ((await detail().getByTestId("new-key").textContent()) as string).slice(0, 12);
    await detail()
      .getByRole("button", { name: `Edit caps of ${prefix}` })
      .click();
    await detail().getByLabel(`Priority of ${prefix}`).selectOption("high");
    await detail().getByRole("button", { name: "Save", exact: true }).click();
    await detail().getByText("high priority").waitFor();
    const keys = (await adminCall(url, `/organizations/${organizationId}/api-keys`)).data;
    expect(keys.find((k: { key_prefix: string }) => k.key_prefix === prefix).priority).toBe("high");
  });

  it.each(WIDTHS)("fits its tables at %s width, long values whole in their titles", async (width, size) => {
    await adminCall(url, `/organizations/${organizationId}/top-ups`, {
      amount_usd: "5",
      note: "a note with a link https://billing.example.com/invoices/2026/11/acme-studios-0000000042",
    });
    await page.setViewportSize(size);
    await page.reload();
    await page.getByRole("button", { name: "Acme Studios" }).click();
    await detail().getByText("acme-studios-0000000042").first().waitFor();
    const name = detail().getByTitle(LONG_NAME);
    await expect(name.textContent()).resolves.toBe(LONG_NAME);
    await expect(overflowOf(page)).resolves.toEqual([]);
    // The revoked key's row, its state last, in full and in sight.
    const revoked = detail().getByText(/^revoked /);
    const box = await revoked.boundingBox();
    expect(box && box.x + box.width).toBeLessThanOrEqual(size.width);
    await saveScreenshot(page, `operator-${width}`);
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
