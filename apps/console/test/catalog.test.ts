/**
 * A model the operator's catalog adds, in the console in Chromium: a server started with a small
 * catalog file (the model has no routes, so the simulated provider serves it). The model is in the
 * picker, its form is built from its schema (choices as selects, whole numbers, a checkbox, a URL
 * list, JSON for an object), it is priced and run to a video, its request copies as the CLI and
 * curl take it, and the Runs page finds the run by the model.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, openPage, signIn, startServer, type TestServer } from "./harness.js";

const SLUG = "acme/clip-maker/image-to-video";
const FRAME = "https://example.com/refs/cat.png";

/** YAML is a superset of JSON: the catalog file is written as JSON, in a `.yaml` file. */
const CATALOG = {
  models: {
    [SLUG]: {
      name: "Clip Maker",
      summary: "A clip from one or two start frames, 1 to 6 s.",
      input_schema: {
        type: "object",
        additionalProperties: false,
        required: ["prompt", "start_frames"],
        properties: {
          prompt: { type: "string", minLength: 1, description: "What happens in the clip." },
          start_frames: { type: "array", minItems: 1, maxItems: 2, items: { type: "string", format: "uri" } },
          seconds: { type: "integer", minimum: 1, maximum: 6, default: 3 },
          style: { type: "string", enum: ["film", "anime", "clay"], default: "film" },
          loop: { type: "boolean", default: false },
          fps: { type: "integer", enum: [24, 30] },
          seed: { anyOf: [{ type: "integer", minimum: 0 }, { type: "null" }], default: null },
          camera: {
            type: "object",
            additionalProperties: false,
            properties: { move: { type: "string", enum: ["dolly", "orbit"] } },
          },
        },
      },
      fields: { prompt: "prompt", duration: "seconds" },
      max_duration_seconds: 6,
      references: { image: { field: "start_frames" } },
      pricing: [{ when: { style: "anime" }, usd_per_second: "0.20" }, { usd_per_second: "0.10" }],
    },
  },
};

let dir: string;
let server: TestServer;
let browser: Browser;
let page: Page;
let blocked: string[];
let pageErrors: string[];
let runId: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "refvid-console-catalog-"));
  const file = join(dir, "catalog.yaml");
  await writeFile(file, JSON.stringify(CATALOG, null, 2));
  server = await startServer({ REFVID_CATALOG_FILE: file });
  const { key } = await createTenant(server.url, "10.00", {}, "Catalog studio");
  ({ browser, page, blocked, pageErrors } = await openPage(server.url));
  await signIn(page, server.url, key);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const form = () => page.getByRole("form", { name: "Run a model" });
const field = (name: string) => form().getByLabel(name, { exact: false });
const tagOf = (name: string) => field(name).evaluate((e) => e.tagName.toLowerCase());
const price = () => page.getByTestId("price").textContent();

describe("a catalog model in the console", () => {
  it("is in the model picker, with a form built from its schema", async () => {
    await form()
      .getByLabel("Model", { exact: true })
      .selectOption({ label: `Clip Maker — ${SLUG}` });
    await page.getByText("A clip from one or two start frames, 1 to 6 s.").waitFor();
    await expect(tagOf("style")).resolves.toBe("select");
    await expect(field("style").inputValue()).resolves.toBe("film");
    await expect(
      field("style")
        .locator("option")
        .evaluateAll((options) => options.map((o) => o.textContent)),
    ).resolves.toEqual(["film", "anime", "clay"]);
    await expect(tagOf("fps")).resolves.toBe("select");
    await expect(field("seconds").getAttribute("type")).resolves.toBe("number");
    await expect(field("seconds").getAttribute("step")).resolves.toBe("1");
    await expect(field("seconds").inputValue()).resolves.toBe("3");
    await expect(field("seed").getAttribute("type")).resolves.toBe("number");
    await expect(field("loop").getAttribute("type")).resolves.toBe("checkbox");
    await expect(tagOf("start_frames")).resolves.toBe("textarea");
    await expect(tagOf("camera")).resolves.toBe("textarea");
  });

  it("shows a field's problem as the user types", async () => {
    await field("seconds").fill("9");
    await expect(page.locator("#field-seconds-error").textContent()).resolves.toBe("At most 6.");
    await field("camera").fill("{move");
    await expect(page.locator("#field-camera-error").textContent()).resolves.toBe(
      "Enter JSON, e.g. [1, 2] or {}.",
    );
    await expect(price()).resolves.toBe("complete the form to see it");
  });

  it("prices the input and copies it as the CLI and curl take it", async () => {
    await field("prompt").fill("A paper boat on a pond");
    await field("start_frames").fill(FRAME);
    await field("seconds").fill("4");
    await field("style").selectOption("anime");
    await field("loop").check();
    await field("fps").selectOption("30");
    await field("seed").fill("7");
    await field("camera").fill('{"move": "orbit"}');
    await page.waitForFunction(() =>
      document.querySelector("[data-testid=price]")?.textContent?.startsWith("$0.80 "),
    );
    await expect(price()).resolves.toBe("$0.80 (4 s at $0.20/s, anime)");

    await page.getByRole("button", { name: "Copy as CLI" }).click();
    await page.getByText("Copied as CLI.").waitFor();
    await expect(page.getByTestId("snippet").textContent()).resolves.toBe(
      "refvid run clip-maker --prompt 'A paper boat on a pond' --image https://example.com/refs/cat.png" +
        ` --seconds 4 --style anime --loop --fps 30 --seed 7 --input '{"camera":{"move":"orbit"}}'`,
    );
    await page.getByRole("button", { name: "Copy as curl" }).click();
    const curl = await page.getByTestId("snippet").textContent();
    expect(curl).toContain(`${server.url}/v1/run/${SLUG}`);
    expect(curl).toContain(
      `-d '{"input":{"prompt":"A paper boat on a pond","start_frames":["${FRAME}"],"seconds":4,"style":"anime","loop":true,"fps":30,"seed":7,"camera":{"move":"orbit"}}}'`,
    );
  });

  it("runs it live to a video that plays in the page", async () => {
    await form().getByRole("button", { name: "Run", exact: true }).click();
    const video = page.getByTestId("run-video");
    await video.waitFor({ timeout: 30_000 });
    await expect(page.getByTestId("run-status").textContent()).resolves.toBe("succeeded");
    await page.waitForFunction(() => (document.querySelector("video")?.readyState ?? 0) >= 1);
    expect(await video.evaluate((v: HTMLVideoElement) => v.duration)).toBeGreaterThan(0);
    const shown = page.locator("section.run");
    runId = (await shown.locator("code").first().textContent()) ?? "";
    expect(runId).toMatch(/^run_/);
    await shown.getByText(SLUG).waitFor();
    await shown.getByText("$0.80 (4 s at $0.20/s)").waitFor();
  });

  it("finds the run by its model on the Runs page", async () => {
    await page.getByRole("link", { name: "Runs" }).click();
    const filters = page.getByRole("form", { name: "Search runs" });
    await filters.getByLabel("Model", { exact: true }).selectOption({ label: "Clip Maker" });
    await filters.getByRole("button", { name: "Search" }).click();
    const row = page.getByRole("row").filter({ hasText: "clip-maker" });
    await row.first().waitFor();
    expect(await row.count()).toBe(1);
    await row.getByRole("link").click();
    const detail = page.getByRole("region", { name: "Run detail" });
    await detail.getByText(SLUG).waitFor();
    await detail.getByText(runId).waitFor();
    await expect(detail.getByTestId("run-status").textContent()).resolves.toBe("succeeded");
  });

  it("made no request off the machine and threw no page errors", () => {
    expect(blocked).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
