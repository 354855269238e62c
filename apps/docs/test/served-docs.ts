/**
 * What the browser tests of the built page share: the page served as the refvid server serves it,
 * the wait for Redoc to hydrate it, and the time budgets of a loaded machine.
 */
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchTestBrowserContext } from "@refvid/test-browser";
import type { BrowserContext, Page } from "playwright-core";

/*
 * Budgets for a loaded 2-core machine, with other test processes beside this one. Every wait is
 * for an event (a section drawn, a value polled until it holds); a budget only bounds how long one
 * may take before it fails with its own message, and is ten times and more what an idle machine
 * needs (a step well under a second, loading and hydrating the 2.6 MB page a few seconds).
 */
/** One step: a section drawn, a heading or URL polled, a click. */
export const STEP = 30_000;
/** Launching Chromium, loading the page, or letting Redoc hydrate it. */
export const LOAD = 60_000;
/** A test of a few steps and a load or two, or the set-up (launch, load, hydrate). */
export const TIMEOUT = 4 * LOAD;

/**
 * Serves dist/ under `${prefix}/docs/` as the server's `express.static` does (`/docs` redirects
 * to `/docs/`); a prefix stands for a reverse proxy that serves refvid under a path.
 */
export function serveDocs(html: Buffer, prefix = ""): Promise<Server> {
  const srv = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
    } else if (path === `${prefix}/docs`) {
      res.writeHead(301, { location: `${prefix}/docs/` }).end();
    } else if (path === `${prefix}/docs/` || path === `${prefix}/docs/index.html`) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "content-length": html.length });
      res.end(req.method === "HEAD" ? undefined : html);
    } else {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
    }
  });
  return new Promise((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

/**
 * Waits until Redoc has hydrated the pre-rendered page and built its search index: the search box,
 * pre-rendered as "Loading...", then reads "Search".
 */
export async function waitForRedoc(p: Page): Promise<void> {
  await p.locator('[data-testid="search-trigger"]', { hasText: "Search" }).waitFor({ timeout: LOAD });
}

/** Chromium at a desktop size, with a profile in a new directory under `name` and the budgets above. */
export async function launchDocsBrowser(
  name: string,
): Promise<{ context: BrowserContext; profileDir: string }> {
  const profileDir = mkdtempSync(join(tmpdir(), `${name}-`));
  const context = await launchTestBrowserContext(profileDir, {
    viewport: { width: 1400, height: 900 },
    timeout: LOAD,
  });
  context.setDefaultTimeout(STEP);
  context.setDefaultNavigationTimeout(LOAD);
  return { context, profileDir };
}
