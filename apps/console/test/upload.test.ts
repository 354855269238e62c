/**
 * Reference files uploaded from the playground in Chromium against a real server: chosen or
 * dropped, each goes to `POST /v1/files` with its progress shown, its URL lands in the field and a
 * run made with it succeeds; a file refvid does not read is refused next to its name.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, openPage, ROOT, signIn, startServer, type TestServer } from "./harness.js";
import { DESKTOP, overflowOf, PHONE, saveScreenshot } from "./layout.js";

const SCULPTURE = join(ROOT, "docs/examples/refs/sculpture.png");
const UPLOAD_URL = /^http:\/\/127\.0\.0\.1:\d+\/v1\/files\/upload_[A-Za-z0-9_-]+\/content$/;

let server: TestServer;
let url: string;
let browser: Browser;
let page: Page;
let pageErrors: string[];

const imageUrls = () => page.locator("#field-image_urls");
const uploadBox = () => page.getByRole("group", { name: "Upload images" });
const lines = async () => (await imageUrls().inputValue()).split("\n").filter(Boolean);

/** A file to drop: its bytes, then `zeros` zero bytes made in the page (cheaper than sent). */
interface Dropped {
  name: string;
  type: string;
  bytes: number[];
  zeros?: number;
}

/** Drops `files`, made in the page, on the upload box, as a file dragged from the desktop is. */
async function drop(...files: Dropped[]) {
  const transfer = await page.evaluateHandle((list) => {
    const data = new DataTransfer();
    for (const f of list) {
      const parts = [new Uint8Array(f.bytes), new Uint8Array(f.zeros ?? 0)];
      data.items.add(new File(parts, f.name, { type: f.type }));
    }
    return data;
  }, files);
  await uploadBox().dispatchEvent("dragover", { dataTransfer: transfer });
  await uploadBox().dispatchEvent("drop", { dataTransfer: transfer });
}

beforeAll(async () => {
  server = await startServer();
  url = server.url;
  const { key } = await createTenant(url, "10.00");
  ({ browser, page, pageErrors } = await openPage(url));
  await page.setViewportSize(DESKTOP);
  await signIn(page, url, key);
  await page
    .getByRole("form", { name: "Run a model" })
    .getByLabel("Model", { exact: true })
    .selectOption({ label: "model-d — lab-d/model-d/reference-to-video" });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe("uploading references in the playground", () => {
  it("uploads a chosen file and puts its URL in the field", async () => {
    await uploadBox().getByLabel("Upload images").setInputFiles(SCULPTURE);
    await uploadBox()
      .getByRole("status")
      .getByText(/^added \(/)
      .waitFor();
    const [uploaded] = await lines();
    expect(uploaded).toMatch(UPLOAD_URL);
    await expect(uploadBox().getByText("sculpture.png").count()).resolves.toBe(1);
  });

  it("runs with the uploaded image to a video", async () => {
    await page.getByLabel("prompt").fill("A slow dolly shot around the sculpture");
    await page.getByLabel("duration").selectOption("4s");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.getByTestId("run-status").getByText("succeeded").waitFor({ timeout: 30_000 });
    await page.getByTestId("run-video").waitFor();
  });

  it("uploads a dropped file and adds its URL on a line of its own", async () => {
    const bytes = [...(await readFile(SCULPTURE))];
    await drop({ name: "dropped.png", type: "image/png", bytes });
    await page.waitForFunction(
      () =>
        (document.querySelector("#field-image_urls") as HTMLTextAreaElement).value.split("\n").length === 2,
    );
    const [first, second] = await lines();
    expect(second).toMatch(UPLOAD_URL);
    expect(second).not.toBe(first);
    await uploadBox().locator("li", { hasText: "dropped.png" }).getByRole("status").waitFor();
  });

  it("says why a file was refused, next to its name, and adds nothing", async () => {
    const before = await lines();
    await drop({ name: "notes.txt", type: "text/plain", bytes: [...Buffer.from("not a picture\n")] });
    const refused = uploadBox().locator("li", { hasText: "notes.txt" }).getByRole("alert");
    await refused.waitFor();
    expect(await refused.textContent()).toMatch(/^Not uploaded: /);
    expect(await lines()).toEqual(before);
    await saveScreenshot(page, "upload-desktop");
    await uploadBox().getByRole("button", { name: "Dismiss" }).click();
    await refused.waitFor({ state: "detached" });
  });

  it("shows an upload's progress as it goes, and cancels it", async () => {
    // The network slowed to 64 kB/s up, so a 1 MB file takes long enough to watch.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 64_000,
    });
    try {
      const before = await lines();
      const bytes = [...(await readFile(SCULPTURE))];
      // 1,000,000 bytes in all, whatever the size of the sample image it starts with (the total
      // shown is the request's: the file and its multipart framing).
      await drop({ name: "large.png", type: "image/png", bytes, zeros: 1_000_000 - bytes.length });
      const item = uploadBox().locator("li", { hasText: "large.png" });
      const progress = item.getByRole("progressbar", { name: "Uploading large.png" });
      await progress.waitFor();
      // Some of it sent, not all: the bar moves as the bytes go.
      await page.waitForFunction(() => {
        const bar = document.querySelector("li[data-state=uploading] progress") as HTMLProgressElement | null;
        return bar !== null && bar.value > 0 && bar.value < bar.max;
      });
      expect(await item.textContent()).toMatch(/^large\.png\d+ % of 97[67](\.\d)? kBCancel$/);
      await saveScreenshot(page, "upload-progress-desktop");
      await item.getByRole("button", { name: "Cancel" }).click();
      await item.waitFor({ state: "detached" });
      expect(await lines()).toEqual(before);
    } finally {
      await cdp.send("Network.emulateNetworkConditions", {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      await cdp.detach();
    }
  });

  it("refuses a file larger than the model takes before sending it", async () => {
    // model-a says how large an image it takes: 30 MB.
    await page
      .getByRole("form", { name: "Run a model" })
      .getByLabel("Model", { exact: true })
      .selectOption({ label: "model-a — lab-a/model-a/reference-to-video" });
    await uploadBox().waitFor();
    const before = await lines();
    const sent: string[] = [];
    page.on("request", (request) => {
      if (request.url().endsWith("/v1/files")) sent.push(request.url());
    });
    await drop({ name: "huge.png", type: "image/png", bytes: [], zeros: 31 * 1024 * 1024 });
    const refused = uploadBox().locator("li", { hasText: "huge.png" }).getByRole("alert");
    await refused.waitFor();
    await expect(refused.textContent()).resolves.toBe(
      "Not uploaded: 31 MB is more than image_urls takes (up to 30 MB).",
    );
    expect(sent).toEqual([]);
    expect(await lines()).toEqual(before);
    await uploadBox().getByRole("button", { name: "Dismiss" }).click();
    await refused.waitFor({ state: "detached" });
  });

  it("fits a phone-width screen", async () => {
    await page.setViewportSize(PHONE);
    await uploadBox().scrollIntoViewIfNeeded();
    await expect(overflowOf(page)).resolves.toEqual([]);
    await saveScreenshot(page, "upload-phone");
    await page.setViewportSize(DESKTOP);
  });

  it("threw no page errors", () => {
    expect(pageErrors).toEqual([]);
  });
});
