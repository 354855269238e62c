/**
 * Renders the built API reference (dist/index.html) in headless Chromium and checks what a reader sees.
 *
 * `redocly build-docs` pre-renders only the landing page; Redoc's inlined script draws the operations
 * in the browser, one tag at a time, each operation at a hash route derived from its tag and
 * operationId (`#/admin/revokeapikey`). So this test serves dist/ the way the server does, under
 * /docs/, lets Redoc hydrate the page, and then opens every operation of the bundle, the
 * `run.terminal` webhook and the Admin tag, checking each one is drawn. All along it records page
 * errors, console errors and requests: the page must load nothing from another host.
 *
 * The browser comes from @refvid/test-browser: Debian's Chromium when it is installed, otherwise the one
 * shipped in the @sparticuz/chromium package (REFVID_TEST_BROWSER=system|packaged forces either).
 * It leaves a screenshot of an operation page at .screenshots/docs.png (outside dist/, so the
 * server does not publish it).
 */
import { existsSync, readFileSync, rmSync } from "node:fs";
import type { Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import type { BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docsHtmlPath } from "../index.js";
import { launchDocsBrowser, STEP, serveDocs, TIMEOUT, waitForRedoc } from "./served-docs.js";

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
}
interface Bundle {
  tags: { name: string; description?: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
}

const require = createRequire(import.meta.url);
const bundle = JSON.parse(readFileSync(require.resolve("@refvid/api-types/openapi.json"), "utf8")) as Bundle;

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
const operationsOf = (items: Record<string, Record<string, Operation>>) =>
  Object.entries(items).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, op]) => ({
        path,
        method: method.toUpperCase(),
        operationId: op.operationId ?? "",
        summary: op.summary ?? "",
        tag: op.tags?.[0] ?? "",
      })),
  );
const operations = operationsOf(bundle.paths);
const webhook = operationsOf(bundle.webhooks).find((op) => op.path === "run.terminal");

/** Opening every operation in turn: under a second each on an idle machine. */
const EVERY_OPERATION_TIMEOUT = TIMEOUT + operations.length * 10_000;

/** `expect.poll` with a step's budget rather than its default of one second. */
const poll = <T>(value: () => T | Promise<T>, message?: string) =>
  expect.poll(value, { timeout: STEP, ...(message ? { message } : {}) });

let server: Server;
let base = "";
let profileDir = "";
let context: BrowserContext | undefined;
let page: Page;
/** `name` of each tag → the route of its sidebar entry, whose link is `#` and the route (`#/admin`). */
let tagRoutes = new Map<string, string>();

const pageErrors: string[] = [];
const consoleErrors: string[] = [];
const requests: string[] = [];
const failedResponses: string[] = [];

/** Requests a browser makes by itself, not for the page: they are not the page's doing. */
const isBrowserOwn = (url: string) => new URL(url).pathname === "/favicon.ico";

/** The served page's own origin, a file, or in-page data: the only things the page may load. */
function isLocal(url: string): boolean {
  const { protocol, hostname } = new URL(url);
  if (protocol === "data:" || protocol === "blob:" || protocol === "file:") return true;
  return (protocol === "http:" || protocol === "https:") && hostname === "127.0.0.1";
}

/** Records everything the page does that the last test judges. */
function watch(p: Page): void {
  p.on("pageerror", (error) => pageErrors.push(`${p.url()}: ${error.stack ?? error.message}`));
  p.on("console", (message) => {
    if (message.type() !== "error") return;
    const where = message.location().url;
    if (where && isBrowserOwn(where)) return;
    consoleErrors.push(`${where || p.url()}: ${message.text()}`);
  });
}

/** Opens a hash route in the loaded page (no reload, as a click on a link does). */
async function openRoute(route: string): Promise<void> {
  await page.evaluate(`window.location.hash = ${JSON.stringify(route)}`);
}

/** The drawn section of `anchor` (`admin/revokeapikey`), once it is visible in the content pane. */
async function section(anchor: string) {
  const locator = page.locator(`#api-content [id="${anchor}"]`);
  await locator.waitFor({ state: "visible", timeout: STEP });
  return locator;
}

/** First line of a section's heading: its title, without the badges drawn after it. */
async function heading(drawn: Locator): Promise<string> {
  return (await drawn.locator("h2").first().innerText()).split("\n")[0]?.trim() ?? "";
}

/** Route of an operation: its tag's route and its operationId, lower-cased, as Redoc derives it. */
function operationRoute(tag: string, operationId: string): string {
  const tagRoute = tagRoutes.get(tag);
  if (tagRoute === undefined) throw new Error(`no sidebar entry for tag ${tag}`);
  return `${tagRoute}/${operationId.toLowerCase()}`;
}

describe("the built page in Chromium", () => {
  beforeAll(async () => {
    if (!existsSync(docsHtmlPath)) {
      throw new Error(`${docsHtmlPath} is missing: run \`npm run build -w @refvid/docs\` first.`);
    }
    server = await serveDocs(readFileSync(docsHtmlPath));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    ({ context, profileDir } = await launchDocsBrowser("refvid-docs-chromium"));
    context.on("request", (request) => {
      const url = request.url();
      if (!isBrowserOwn(url)) requests.push(url);
    });
    context.on("response", (response) => {
      if (response.status() >= 400 && !isBrowserOwn(response.url())) {
        failedResponses.push(`${response.status()} ${response.url()}`);
      }
    });
    // Recorded above, and failed fast here rather than left to time out without a network.
    await context.route(
      (url) => !isLocal(url.href),
      (route) => route.abort("blockedbyclient"),
    );

    page = context.pages()[0] ?? (await context.newPage());
    watch(page);
    await page.goto(`${base}/docs/`, { waitUntil: "load" });
    await waitForRedoc(page);

    // Redoc pre-renders them as root paths (`/admin`) and scripts/postbuild.mjs makes them the hash
    // routes the browser draws (`#/admin`); the first test checks which. The route is the same.
    const entries = await page
      .locator('[data-component-name="Menu/MenuItem"] a')
      .evaluateAll((links) =>
        links.map((link) => [link.textContent?.trim() ?? "", link.getAttribute("href") ?? ""] as const),
      );
    tagRoutes = new Map(
      entries
        .filter(([name]) => bundle.tags.some((tag) => tag.name === name))
        .map(([name, href]) => [name, href.replace(/^#/, "")]),
    );
  }, TIMEOUT);

  afterAll(async () => {
    await context?.close();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    if (profileDir) rmSync(profileDir, { recursive: true, force: true });
  }, TIMEOUT);

  it(
    "hydrates under /docs/ with in-page links; a click on a sidebar entry opens its tag",
    async () => {
      expect(page.url()).toBe(`${base}/docs/`);
      await expect(page.locator("#api-content h1").first().innerText()).resolves.toContain("refvid API");
      expect([...tagRoutes.keys()].sort()).toEqual(bundle.tags.map((tag) => tag.name).sort());
      for (const route of tagRoutes.values()) expect(route).toMatch(/^\/[a-z0-9-]+$/);

      // Every link of the page is a hash route or an absolute URL: none leads to the site root
      // (`/admin`), which is not the docs once the page is served at /docs/.
      const hrefs = await page
        .locator("#redoc a[href]")
        .evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""));
      expect(
        hrefs.filter((href) => !/^(#\/|https?:\/\/)/.test(href)),
        "links off the page",
      ).toEqual([]);
      expect(hrefs.filter((href) => href.startsWith("#/")).length).toBeGreaterThan(bundle.tags.length);

      const runs = bundle.tags[0]?.name ?? "Runs";
      const exactly = new RegExp(`^${runs.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`);
      await page.locator('[data-component-name="Menu/MenuItem"] a', { hasText: exactly }).click();
      await poll(() => page.url()).toBe(`${base}/docs/#${tagRoutes.get(runs)}`);
      const drawn = await section(tagRoutes.get(runs)?.slice(1) ?? "");
      await poll(() => heading(drawn)).toBe(runs);
    },
    TIMEOUT,
  );

  it(
    "draws every operation at its operationId's route, with its summary, method and path",
    async () => {
      expect(operations.length).toBeGreaterThan(0);
      for (const op of operations) {
        const route = operationRoute(op.tag, op.operationId);
        await openRoute(route);
        const drawn = await section(route.slice(1));
        await poll(() => heading(drawn), op.operationId).toBe(op.summary);
        const text = await drawn.innerText();
        expect(text, `${op.operationId}: method and path`).toContain(`${op.method}\n${op.path}`);
        await expect(
          drawn.locator(`a[href="#${route}"]`).count(),
          `${op.operationId}: deep link to itself`,
        ).resolves.toBeGreaterThan(0);
      }
      // The drawn operation's sidebar entry is expanded and links to the same route.
      const last = operations.at(-1);
      if (last) {
        const route = operationRoute(last.tag, last.operationId);
        await expect(
          page.locator(`[data-component-name="Menu/MenuItem"] a[href="#${route}"]`).innerText(),
        ).resolves.toContain(last.summary);
      }
    },
    EVERY_OPERATION_TIMEOUT,
  );

  it(
    "draws the run.terminal webhook",
    async () => {
      expect(webhook, "run.terminal in the bundle").toBeDefined();
      if (!webhook) return;
      const route = operationRoute(webhook.tag, webhook.operationId);
      await openRoute(route);
      const drawn = await section(route.slice(1));
      await poll(() => heading(drawn)).toBe(webhook.summary);
      await expect(drawn.locator("h2").first().innerText(), "the Webhook badge").resolves.toContain(
        "Webhook",
      );
      const text = await drawn.innerText();
      expect(text).toContain(`${webhook.method}\nrun.terminal`);
      expect(text).toContain("webhook-signature");
    },
    TIMEOUT,
  );

  it(
    "opens the Admin tag from its sidebar entry, listing every Admin operation",
    async () => {
      const adminRoute = tagRoutes.get("Admin");
      expect(adminRoute).toBeDefined();
      await page.locator('[data-component-name="Menu/MenuItem"] a', { hasText: /^Admin$/ }).click();
      await poll(() => new URL(page.url()).hash).toBe(`#${adminRoute}`);
      const drawn = await section(adminRoute?.slice(1) ?? "admin");
      await poll(() => heading(drawn)).toBe("Admin");
      // Redoc folds a long operation list behind "Show N more…"; unfold it to read every one.
      const more = drawn.getByText(/^Show \d+ more/);
      if ((await more.count()) > 0) await more.first().click();
      const text = await drawn.innerText();
      expect(text).toContain("REFVID_ADMIN_TOKEN");
      const admin = operations.filter((op) => op.tag === "Admin");
      expect(admin.length).toBeGreaterThan(0);
      for (const op of admin) expect(text, op.operationId).toContain(`${op.method}\n${op.path}`);
      // The sidebar now lists the Admin operations under the tag.
      for (const op of admin) {
        const link = page.locator(
          `[data-component-name="Menu/MenuItem"] a[href="#${operationRoute("Admin", op.operationId)}"]`,
        );
        await expect(link.innerText(), op.operationId).resolves.toContain(op.summary);
      }
    },
    TIMEOUT,
  );

  it(
    "opens a deep link on a fresh load of /docs (the server's address, redirected to /docs/)",
    async () => {
      const op = operations.find((candidate) => candidate.tag === "Admin") ?? operations[0];
      if (!op) throw new Error("no operation");
      const route = operationRoute(op.tag, op.operationId);
      const fresh = await context?.newPage();
      if (!fresh) throw new Error("no browser context");
      watch(fresh);
      try {
        await fresh.goto(`${base}/docs#${route}`, { waitUntil: "load" });
        expect(fresh.url()).toBe(`${base}/docs/#${route}`);
        await waitForRedoc(fresh);
        const drawn = fresh.locator(`#api-content [id="${route.slice(1)}"]`);
        await drawn.waitFor({ state: "visible" });
        await poll(() => heading(drawn)).toBe(op.summary);
      } finally {
        await fresh.close();
      }
    },
    TIMEOUT,
  );

  it(
    "looks right: a screenshot of an operation page is left at .screenshots/docs.png",
    async () => {
      const op = operations[0];
      if (!op) throw new Error("no operation");
      const route = operationRoute(op.tag, op.operationId);
      await openRoute(route);
      const drawn = await section(route.slice(1));
      await drawn.evaluate((element) => element.scrollIntoView({ block: "start" }));
      await page.mouse.move(0, 0);
      const path = join(dirname(docsHtmlPath), "..", ".screenshots", "docs.png");
      // Finite CSS transitions (the sidebar folding the last tag away) are run to their end first.
      const png = await page.screenshot({ path, animations: "disabled" });
      expect(png.length).toBeGreaterThan(10_000);
    },
    TIMEOUT,
  );

  it("raised no page error or console error and requested nothing from another host", () => {
    expect(requests.length, "requests recorded").toBeGreaterThan(0);
    const offHost = requests.filter((url) => !isLocal(url));
    expect.soft(offHost, "requests to hosts other than 127.0.0.1").toEqual([]);
    expect.soft(pageErrors, "page errors").toEqual([]);
    expect.soft(consoleErrors, "console errors").toEqual([]);
    expect.soft(failedResponses, "responses >= 400").toEqual([]);
  });
});
