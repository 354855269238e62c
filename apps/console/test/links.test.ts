/**
 * Every run has a URL of its own, `#/runs/<run_id>`: a run started in the playground links to it,
 * a click in the runs list goes to it, and the URL opens that run again after a reload or in a
 * new tab (once signed in), brought into view at desktop and phone widths.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, openPage, signIn, startServer, type TestServer } from "./harness.js";
import { DESKTOP, isInViewport, PHONE, saveScreenshot } from "./layout.js";

const RUN_HASH = /^#\/runs\/(run_[0-9a-f-]{36})$/;

let server: TestServer;
let url: string;
let apiKey: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];
/** The run started in the playground. */
let runId: string;
/** A dozen runs submitted through the API, the oldest first. */
let batch: string[] | undefined;

/** Waits for the page's URL to end in `hash`: a click on a link changes it a moment later. */
const hashIs = (hash: string) => page.waitForURL((u) => u.hash === hash);
const detail = () => page.getByRole("region", { name: "Run detail" });

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  // Enough for the growth tier, so a dozen runs may be in flight at once.
  ({ key: apiKey } = await createTenant(url, "400.00", { max_concurrency: 20 }));
  ({ browser, page, pageErrors } = await openPage(url));
  await page.setViewportSize(DESKTOP);
  await signIn(page, url, apiKey);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Submits `count` model-d runs through the API, each with `metadata`; resolves with their ids. */
async function submitRuns(count: number, metadata: Record<string, string>): Promise<string[]> {
  if (batch) return batch;
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${url}/v1/run/lab-d/model-d/reference-to-video`, {
      method: "POST",
      headers: { authorization: `Key ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        input: { prompt: `run ${i}`, image_urls: ["https://example.com/refs/cat.png"], duration: "4s" },
        metadata,
      }),
    });
    expect(res.status).toBe(201);
    ids.push((await res.json()).run_id);
  }
  batch = ids;
  return ids;
}

describe("a run's URL", () => {
  it("is linked from the playground once the run starts, and opens the run", async () => {
    const form = page.getByRole("form", { name: "Run a model" });
    await form.getByLabel("Model", { exact: true }).selectOption({ index: 3 });
    await page.getByLabel("prompt").fill("A slow dolly shot");
    await page.getByLabel("image_urls").fill("https://example.com/refs/cat.png");
    await form.getByRole("button", { name: "Run", exact: true }).click();
    const link = page.getByTestId("run-link");
    await link.waitFor();
    const href = (await link.getAttribute("href")) ?? "";
    runId = RUN_HASH.exec(href)?.[1] ?? "";
    expect(runId).not.toBe("");
    await link.click();
    await hashIs(`#/runs/${runId}`);
    await page.locator('nav a[aria-current="page"]', { hasText: "Runs" }).waitFor();
    await detail().getByText(runId).waitFor();
    // Followed live on its page too, to its end.
    await detail().getByTestId("run-status").getByText("succeeded").waitFor({ timeout: 30_000 });
  });

  it("opens the same run after a reload", async () => {
    await page.reload();
    await detail().getByText(runId).waitFor();
    await hashIs(`#/runs/${runId}`);
    await expect(detail().getByTestId("run-status").textContent()).resolves.toBe("succeeded");
    expect(await isInViewport(detail().getByRole("heading", { name: "Run detail" }))).toBe(true);
  });

  it("opens the run in a new tab once the key is given there", async () => {
    const other = await page.context().newPage();
    try {
      await other.goto(`${url}/console#/runs/${runId}`);
      // A new tab has a sessionStorage of its own: it asks for the key and keeps the link.
      await other.getByLabel("API key").fill(apiKey);
      await other.getByRole("button", { name: "Sign in" }).click();
      const otherDetail = other.getByRole("region", { name: "Run detail" });
      await otherDetail.getByText(runId).waitFor();
      await expect(otherDetail.getByTestId("run-status").textContent()).resolves.toBe("succeeded");
      expect(new URL(other.url()).hash).toBe(`#/runs/${runId}`);
    } finally {
      await other.close();
    }
  });

  it.each([
    ["desktop", DESKTOP],
    ["phone", PHONE],
  ] as const)(
    "is where a click in the runs list goes, and brings the run into view at %s width",
    async (width, size) => {
      const ids = await submitRuns(12, { batch: "links" });
      await page.setViewportSize(size);
      await page.getByRole("navigation").getByRole("link", { name: "Runs" }).click();
      await hashIs("#/runs");
      await detail().waitFor({ state: "detached" });
      const filters = page.getByRole("form", { name: "Search runs" });
      await filters.getByLabel("Metadata", { exact: true }).fill("batch=links");
      await filters.getByRole("button", { name: "Search" }).click();
      await page.waitForFunction(() => document.querySelectorAll(".runs tbody tr").length === 12);
      // The oldest, last in the list: far below the top of the page.
      const oldest = ids[0] ?? "";
      const row = page.locator(`.runs tbody a[href="#/runs/${oldest}"]`);
      await row.scrollIntoViewIfNeeded();
      await row.click();
      await hashIs(`#/runs/${oldest}`);
      await detail().getByText(oldest).waitFor();
      const heading = detail().getByRole("heading", { name: "Run detail" });
      expect(await isInViewport(heading)).toBe(true);
      await expect(heading.evaluate((h) => h === document.activeElement)).resolves.toBe(true);
      await saveScreenshot(page, `run-page-${width}`);
      // Back goes to the list, as in any site.
      await page.goBack();
      await hashIs("#/runs");
      await detail().waitFor({ state: "detached" });
    },
  );

  it("says so when the URL names no run of this key", async () => {
    await page.setViewportSize(DESKTOP);
    await page.goto(`${url}/console#/runs/run_00000000-0000-4000-8000-000000000000`);
    const alert = detail().getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("No run run_00000000-0000-4000-8000-000000000000");
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
