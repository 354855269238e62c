/**
 * A queued run's page says where it stands in the queue, at desktop and phone widths: the
 * worker's four slots are held by long runs, so the runs after them wait.
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, openPage, signIn, startServer, type TestServer } from "./harness.js";
import { overflowOf, saveScreenshot, WIDTHS } from "./layout.js";

let server: TestServer;
let url: string;
let apiKey: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];
let queued: string[];

async function submit(prompt: string): Promise<string> {
  const res = await fetch(`${url}/v1/run/lab-d/model-d/reference-to-video`, {
    method: "POST",
    headers: { authorization: `Key ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({
      input: { prompt, image_urls: ["https://example.com/refs/cat.png"], duration: "4s" },
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()).run_id;
}

beforeAll(async () => {
  server = await startServer({ REFVID_WORKER_CONCURRENCY: "2" });
  url = server.url;
  ({ key: apiKey } = await createTenant(url, "400.00", { max_concurrency: 20 }));
  for (let i = 0; i < 2; i++) await submit(`held ${i} [simulate:delay=600000]`);
  queued = [await submit("waits [simulate:delay=600000]"), await submit("waits too [simulate:delay=600000]")];
  ({ browser, page, pageErrors } = await openPage(url));
  await signIn(page, url, apiKey);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("a queued run's page", () => {
  it.each(WIDTHS)("says how many runs are ahead of it at %s width", async (width, size) => {
    await page.setViewportSize(size);
    await page.goto(`${url}/console/#/runs/${queued[1]}`);
    const detail = page.getByRole("region", { name: "Run detail" });
    await detail.getByText(queued[1] as string).waitFor();
    await expect.poll(() => detail.getByTestId("queue-place").textContent()).toBe("1 ahead in the queue");
    await page.goto(`${url}/console/#/runs/${queued[0]}`);
    await detail.getByText(queued[0] as string).waitFor();
    await detail.getByText("Next to start").waitFor();
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, `queued-run-${width}`);
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
