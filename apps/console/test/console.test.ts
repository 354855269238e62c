/**
 * The console in Chromium against a real refvid server (the built apps/server, simulated provider):
 * sign in, run model-d to a playable video, see a field error, find the run, read the account;
 * as the operator, read the usage report and change a key's caps (operator.test.ts has the rest).
 * Nothing may leave 127.0.0.1. With REFVID_UPDATE_SCREENSHOTS=1 it also writes docs/images/console-*.png.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ADMIN_TOKEN,
  adminCall,
  createTenant,
  openPage,
  ROOT,
  signInAsOperator,
  signIn as signInAt,
  startServer,
  type TestServer,
} from "./harness.js";

const SCREENSHOTS = process.env.REFVID_UPDATE_SCREENSHOTS === "1";

let server: TestServer;
let url: string;
let apiKey: string;
/** The organization of `apiKey`, which runs model-d. */
let organizationId: string;
/** The runs `apiKey` submitted through the API. */
const runIds: string[] = [];
let browser: Browser;
let page: Page;
let blocked: string[];
let pageErrors: string[];

const admin = (path: string, body?: unknown) => adminCall(url, path, body);
const tenant = (balance: string, key: Record<string, unknown> = {}, name?: string) =>
  createTenant(url, balance, key, name);
const signIn = (key: string) => signInAt(page, url, key);

const runForm = () => page.getByRole("form", { name: "Run a model" });
const runButton = () => runForm().getByRole("button", { name: "Run", exact: true });

async function chooseModel(name: "model-a" | "model-d") {
  const slug = `lab-${name.slice(-1)}/${name}/reference-to-video`;
  await runForm()
    .getByLabel("Model", { exact: true })
    .selectOption({ label: `${name} — ${slug}` });
}

async function screenshot(name: string) {
  if (SCREENSHOTS)
    await page.screenshot({ path: join(ROOT, "docs/images", `console-${name}.png`), fullPage: true });
}

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  ({ key: apiKey, organizationId } = await tenant("50.00", {}, "Model-d studio"));
  ({ browser, page, blocked, pageErrors } = await openPage(url));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("the console", () => {
  it("signs in with an API key kept in sessionStorage", async () => {
    await signIn(apiKey);
    expect(await page.evaluate(() => sessionStorage.getItem("refvid.apiKey"))).toBe(apiKey);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
  });

  it("shows a field's problem next to it as the user types", async () => {
    await chooseModel("model-d");
    await page.getByLabel("image_urls").fill("ftp://example.com/a.png");
    await expect(page.locator("#field-image_urls-error").textContent()).resolves.toBe(
      "Line 1 must be an http or https URL.",
    );
    await expect(page.getByLabel("image_urls").getAttribute("aria-invalid")).resolves.toBe("true");
    await page.getByLabel("prompt").fill("x");
    await page.getByLabel("prompt").fill("");
    await expect(page.locator("#field-prompt-error").textContent()).resolves.toBe("This field is required.");
    await expect(page.getByTestId("price").textContent()).resolves.toBe("complete the form to see it");
  });

  it("shows a problem only the server knows next to its field", async () => {
    await chooseModel("model-a");
    await page.getByLabel("prompt").fill("Bars to music");
    await page.getByLabel("audio_urls").fill("https://example.com/refs/track.mp3");
    await runButton().click();
    await page.locator("#field-audio_urls-error").waitFor();
    await expect(page.locator("#field-audio_urls-error").textContent()).resolves.toBe(
      "audio cannot be the only reference; add image_urls or video_urls",
    );
  });

  it("runs model-d live to a video that plays in the page, and copies the request", async () => {
    await chooseModel("model-d");
    await page.getByLabel("prompt").fill("A slow dolly shot around the sculpture at golden hour");
    await page.getByLabel("image_urls").fill("https://example.com/refs/cat.png");
    await page.getByLabel("duration").selectOption("4s");
    await page.getByLabel("metadata", { exact: true }).fill("project=console-test");
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=price]")?.textContent?.startsWith("$0.284 "),
    );
    await page.getByRole("button", { name: "Copy as CLI" }).click();
    const cli =
      "refvid run model-d --prompt 'A slow dolly shot around the sculpture at golden hour' --duration 4s --image https://example.com/refs/cat.png";
    await page.getByText("Copied as CLI.").waitFor();
    await expect(page.getByTestId("snippet").textContent()).resolves.toBe(cli);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(cli);

    await runButton().click();
    const video = page.getByTestId("run-video");
    await video.waitFor({ timeout: 30_000 });
    await expect(page.getByTestId("run-status").textContent()).resolves.toBe("succeeded");
    await page.waitForFunction(() => (document.querySelector("video")?.readyState ?? 0) >= 1);
    expect(await video.evaluate((v: HTMLVideoElement) => v.duration)).toBeGreaterThan(0);
    await screenshot("playground");
  });

  it("finds the run by status, model and metadata, and shows its timeline", async () => {
    await page.getByRole("link", { name: "Runs" }).click();
    const filters = page.getByRole("form", { name: "Search runs" });
    await filters.getByLabel("succeeded").check();
    await filters.getByLabel("Model", { exact: true }).selectOption({ label: "model-d" });
    await filters.getByLabel("Metadata", { exact: true }).fill("project=console-test");
    await filters.getByRole("button", { name: "Search" }).click();
    const row = page.getByRole("row").filter({ hasText: "model-d" });
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    // Its poster frame, from the run's signed thumbnail_url, loads (lazily, as the row is shown).
    const poster = row.getByRole("img", { name: /^Poster frame of run run_/ });
    await poster.scrollIntoViewIfNeeded();
    await poster.evaluate((img: HTMLImageElement) => img.decode());
    expect(await poster.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(320);
    await row.getByRole("link").click();
    await page.waitForURL((u) => /^#\/runs\/run_[0-9a-f-]{36}$/.test(u.hash));
    const detail = page.getByRole("region", { name: "Run detail" });
    await detail.getByText("Elapsed").waitFor();
    await expect(detail.getByTestId("run-status").textContent()).resolves.toBe("succeeded");
    await expect(detail.getByText('{"project":"console-test"}').count()).resolves.toBe(1);

    // Metadata no run carries: nothing matches.
    await filters.getByLabel("Metadata", { exact: true }).fill("project=other");
    await filters.getByRole("button", { name: "Search" }).click();
    await page.getByText("No runs match.").waitFor();
    await filters.getByLabel("Metadata", { exact: true }).fill("project=console-test");
    await filters.getByRole("button", { name: "Search" }).click();
    await row.first().waitFor();
    await screenshot("runs");
  });

  it("shows the wallet, limits and webhook secret", async () => {
    await page.getByRole("link", { name: "Account" }).click();
    await page.getByTestId("balance").waitFor();
    // 50.00 topped up, minus the 4 s model-d run at 0.071 USD/s.
    await expect(page.getByTestId("balance").textContent()).resolves.toBe("$49.716");
    await page.getByRole("button", { name: "Show" }).click();
    await expect(page.getByTestId("webhook-secret").textContent()).resolves.toMatch(/^whsec_/);
    await expect(page.getByTestId("webhook-secret-environment").textContent()).resolves.toBe("live");
    await page.getByRole("button", { name: "Hide" }).click();
    await screenshot("account");
  });

  it("fits a phone-width screen", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Playground" }).click();
    await page.getByLabel("prompt").waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot("phone");
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it("pages through runs with the keyset cursor", async () => {
    // Six more runs, submitted through the API: seven in all, newest first, five to a page.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${url}/v1/run/lab-d/model-d/reference-to-video`, {
        method: "POST",
        headers: { authorization: `Key ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({
          input: { prompt: `run ${i}`, image_urls: ["https://example.com/refs/cat.png"], duration: "4s" },
          metadata: { batch: "paging" },
        }),
      });
      expect(res.status).toBe(201);
      runIds.push((await res.json()).run_id);
    }
    await page.getByRole("link", { name: "Runs" }).click();
    const filters = page.getByRole("form", { name: "Search runs" });
    await filters.getByLabel("succeeded").uncheck();
    await filters.getByLabel("Metadata", { exact: true }).fill("");
    await filters.getByLabel("Per page").selectOption("5");
    await filters.getByRole("button", { name: "Search" }).click();
    const rows = page.getByRole("table", { name: "Runs, newest first" }).locator("tbody tr");
    await page.waitForFunction(() => document.querySelectorAll(".runs tbody tr").length === 5);
    const first = await rows.allTextContents();
    await page.getByRole("button", { name: "Next page" }).click();
    await page.waitForFunction(() => document.querySelectorAll(".runs tbody tr").length === 2);
    const second = await rows.allTextContents();
    expect(second.filter((row) => first.includes(row))).toEqual([]);
    await expect(page.getByRole("button", { name: "Next page" }).isDisabled()).resolves.toBe(true);
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.waitForFunction(() => document.querySelectorAll(".runs tbody tr").length === 5);
  });

  it("says how much a run needs when the wallet cannot cover it", async () => {
    await signIn((await tenant("0.10")).key);
    await chooseModel("model-d");
    await page.getByLabel("prompt").fill("A slow dolly shot");
    await page.getByLabel("image_urls").fill("https://example.com/refs/cat.png");
    await runButton().click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    await expect(alert.textContent()).resolves.toBe(
      "Not enough balance: this run needs $0.568, and $0.10 is available. Top up the wallet and try again.",
    );
  });

  it("says when to retry after a 429", async () => {
    // One request a minute: the model list takes it, so the account page is refused.
    await signIn((await tenant("1.00", { rate_limit_per_minute: 1 })).key);
    await page.getByRole("link", { name: "Account" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/^Too many requests\. You can retry in \d+ s \(at .+\)\.$/);
  });

  it("lets the operator sign in with the admin token", async () => {
    await signInAsOperator(page, url);
    expect(await page.evaluate(() => sessionStorage.getItem("refvid.adminToken"))).toBe(ADMIN_TOKEN);
  });

  it("shows the usage the API reports, by model, key and organization, with vendor cost and margin", async () => {
    await page.getByRole("button", { name: "Model-d studio" }).click();
    await page.getByRole("region", { name: "Organization Model-d studio" }).waitFor();
    const usage = page.getByRole("region", { name: "Usage" });
    await usage.getByLabel("Organization").selectOption({ label: "Model-d studio" });
    // The form's dates, as the API's window: the start of `from` to the end of `to`, UTC.
    const from = await usage.getByLabel("From").inputValue();
    const to = await usage.getByLabel("To", { exact: true }).inputValue();
    const end = new Date(Date.parse(`${to}T00:00:00Z`) + 86_400_000).toISOString();
    expect(Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)).toBe(30 * 86_400_000);
    const rows = usage.locator("tbody tr");
    // Each run's event stream ends when the run does: then the figures stay put.
    for (const id of runIds) {
      const events = await fetch(`${url}/v1/runs/${id}/events`, {
        headers: { authorization: `Key ${apiKey}` },
      });
      expect(await events.text()).toContain("event: done");
    }

    for (const groupBy of ["model", "api_key", "organization"]) {
      await usage.getByLabel("Group by").selectOption(groupBy);
      await usage.getByRole("button", { name: "Show usage" }).click();
      await usage.getByRole("columnheader", { name: groupBy }).waitFor();
      const query = new URLSearchParams({
        from: `${from}T00:00:00.000Z`,
        to: end,
        group_by: groupBy,
        organization_id: organizationId,
      });
      const report = await admin(`/usage?${query}`);
      expect(report.data.length).toBeGreaterThan(0);
      const expected = report.data.map((g: any) => [
        // A report by organization names each one beside its id.
        groupBy === "organization" ? `Model-d studio ${g.group}` : g.group,
        g.environment,
        String(g.runs.total),
        String(g.runs.succeeded),
        String(g.failures),
        String(g.billed_seconds),
        `$${g.spend_usd}`,
        `$${g.priced_usd}`,
        `$${g.vendor_cost_usd}`,
        `$${g.margin_usd}`,
      ]);
      const shown = await rows.evaluateAll((trs) =>
        trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
      );
      expect(shown).toEqual(expected);
      if (groupBy === "model") {
        expect(report.data.map((g: any) => g.group)).toEqual(["lab-d/model-d/reference-to-video"]);
        // The run from the playground and the six paged through: 4 s each at 0.071 USD/s. The
        // simulator costs the operator nothing, so the margin is the whole spend.
        expect(shown[0]?.slice(2)).toEqual(["7", "7", "0", "28", "$1.988", "$1.988", "$0.00", "$1.988"]);
        await screenshot("usage");
      }
    }
  });

  it("shows a bad usage range next to From", async () => {
    const usage = page.getByRole("region", { name: "Usage" });
    const to = await usage.getByLabel("To", { exact: true }).inputValue();
    const after = new Date(Date.parse(`${to}T00:00:00Z`) + 2 * 86_400_000).toISOString().slice(0, 10);
    await usage.getByLabel("From").fill(after);
    await usage.getByRole("button", { name: "Show usage" }).click();
    const problem = usage.locator("#usage-from-error");
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/^must be before to \(/);
    await expect(usage.getByLabel("From").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(usage.getByRole("table").count()).resolves.toBe(0);
  });

  it("changes a key's caps in place, with the server's refusal next to the field", async () => {
    const detail = page.getByRole("region", { name: "Organization Model-d studio" });
    await detail.getByRole("button", { name: /^Edit caps of / }).click();
    const concurrency = detail.getByLabel(/^Max concurrency of /);
    // Past the browser's own check (min="1"), so the server's answer is what shows.
    await concurrency.evaluate((input) => input.removeAttribute("min"));
    await concurrency.fill("0");
    await detail.getByRole("button", { name: "Save" }).click();
    const problem = detail.locator("td.cap .field-error");
    await problem.waitFor();
    await expect(concurrency.getAttribute("aria-describedby")).resolves.toBe(
      await problem.getAttribute("id"),
    );

    await concurrency.fill("7");
    await detail.getByRole("button", { name: "Save" }).click();
    await detail.getByRole("button", { name: /^Edit caps of / }).waitFor();
    const keys = await admin(`/organizations/${organizationId}/api-keys`);
    expect(keys.data.map((k: any) => k.max_concurrency)).toEqual([7]);
    await expect(detail.getByRole("cell", { name: "7", exact: true }).count()).resolves.toBe(1);
  });

  it("is served with a Content-Security-Policy, never framed, sending no referrer", async () => {
    const res = await fetch(`${url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toMatch(
      /default-src 'self'; script-src 'self'; style-src 'self';.*frame-ancestors 'none'/,
    );
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
  });

  it("made no request off the machine, threw no page errors and broke no Content-Security-Policy rule", () => {
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
