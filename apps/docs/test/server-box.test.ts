/**
 * The page names the server that serves it (issue 30): in the overview's server box and in each
 * operation's URL menu, the address is the serving origin, with any path before `/docs` (a
 * reverse proxy serving refvid under a path), not the document's default, http://localhost:8080
 * (scripts/postbuild.mjs sets it before Redoc hydrates). A page opened from a file keeps that
 * default. Checked in Chromium, where a hydration that found other markup than the pre-rendered
 * one would log an error.
 */
import { readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docsHtmlPath } from "../index.js";
import { launchDocsBrowser, STEP, serveDocs, TIMEOUT, waitForRedoc } from "./served-docs.js";

/** The document's default server, which only a page read from a file should show. */
const DEFAULT_SERVER = "http://localhost:8080";
/** An operation, at the route Redoc draws it at (its tag's and its operationId's, lower-cased). */
const OPERATION = { route: "runs/getrun", path: "/v1/runs/{run_id}" };

const servers: Server[] = [];
let context: BrowserContext | undefined;
let profileDir = "";
const problems: string[] = [];

/** The `http://127.0.0.1:<port>` of a server of the page under `${prefix}/docs/`. */
async function served(prefix: string): Promise<string> {
  const server = await serveDocs(readFileSync(docsHtmlPath), prefix);
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A new tab on `url`, hydrated, with its page and console errors recorded. */
async function open(url: string): Promise<Page> {
  if (!context) throw new Error("no browser");
  const page = await context.newPage();
  page.on("pageerror", (error) => problems.push(`${url}: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`${url}: ${message.text()}`);
  });
  await page.goto(url, { waitUntil: "load" });
  await waitForRedoc(page);
  return page;
}

/** The overview's server box, its variable unfolded: description, URL and the variable's default. */
async function serverBox(page: Page): Promise<string> {
  const box = page.locator('[data-testid="server-panel-item-name"]').first().locator("xpath=../..");
  await box.getByText(/^Show 1 variable$/).click();
  await expect.poll(() => box.innerText(), { timeout: STEP }).toContain("Default");
  return box.innerText();
}

/** The URLs an operation's menu offers (its servers and its path), once the operation is drawn. */
async function operationUrls(page: Page): Promise<string> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(`/${OPERATION.route}`)}`);
  const drawn = page.locator(`#api-content [id="${OPERATION.route}"]`);
  await drawn.waitFor({ state: "visible", timeout: STEP });
  return (await drawn.locator('[data-testid="dropdown-menu"]').first().textContent()) ?? "";
}

describe("the server box in Chromium", () => {
  beforeAll(async () => {
    ({ context, profileDir } = await launchDocsBrowser("refvid-docs-server-box"));
  }, TIMEOUT);

  afterAll(async () => {
    await context?.close();
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  }, TIMEOUT);

  it.each<[string, { prefix: string }]>([
    ["at /docs/, as the refvid server serves it", { prefix: "" }],
    ["under a path, as a reverse proxy may serve refvid", { prefix: "/refvid" }],
  ])(
    "shows the serving origin when served %s",
    async (_name, { prefix }) => {
      const origin = await served(prefix);
      const page = await open(`${origin}${prefix}/docs/`);
      try {
        const base = `${origin}${prefix}`;
        const box = await serverBox(page);
        expect(box).toContain(`Default\n${base}\n`);
        expect(box).not.toContain(DEFAULT_SERVER);
        const urls = await operationUrls(page);
        expect(urls).toContain(`${base}${OPERATION.path}`);
        expect(urls).not.toContain(DEFAULT_SERVER);
      } finally {
        await page.close();
      }
    },
    TIMEOUT,
  );

  it(
    "keeps the document's default in a page opened from a file",
    async () => {
      const page = await open(pathToFileURL(docsHtmlPath).href);
      try {
        expect(await serverBox(page)).toContain(`Default\n${DEFAULT_SERVER}\n`);
        expect(await operationUrls(page)).toContain(`${DEFAULT_SERVER}${OPERATION.path}`);
      } finally {
        await page.close();
      }
    },
    TIMEOUT,
  );

  it("raised no page error or console error (hydration found the pre-rendered markup)", () => {
    expect(problems).toEqual([]);
  });
});
