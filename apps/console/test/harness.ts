/**
 * What the console's browser tests start from: a real refvid server (the built apps/server, in
 * memory, simulated provider, plus whatever `env` adds, such as a catalog file), its admin API, and
 * a Chromium page that may reach 127.0.0.1 only.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { launchTestBrowser } from "@refvid/test-browser";
import { freePort } from "@refvid/test-browser/ports";
import type { Browser, Page } from "playwright-core";

export const ROOT = resolve(import.meta.dirname, "../../..");
export const ADMIN_TOKEN = "console-test-admin-token-0123456789";

export interface TestServer {
  url: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Starts the server; resolves once it answers `/healthz`, rejects if it exits first. */
export async function startServer(env: Record<string, string> = {}): Promise<TestServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const dataDir = await mkdtemp(join(tmpdir(), "refvid-console-"));
  const server = spawn(process.execPath, [join(ROOT, "apps/server/dist/main.js")], {
    env: {
      ...process.env,
      PORT: String(port),
      REFVID_PUBLIC_URL: url,
      REFVID_STORE: "memory",
      REFVID_ADMIN_TOKEN: ADMIN_TOKEN,
      REFVID_PROVIDER: "simulated",
      REFVID_SIMULATED_LATENCY_MS: "800",
      REFVID_SEED_DEMO: "false",
      REFVID_DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      ...env,
    },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<never>((_, fail) =>
    server.once("exit", (code) => fail(new Error(`the server exited with ${code} before it was healthy`))),
  );
  const healthy = (async () => {
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  await Promise.race([healthy, exited]);
  server.removeAllListeners("exit");
  return {
    url,
    process: server,
    stop: async () => {
      server.kill();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** An admin API call to the server at `url`: a POST with `body`, or a GET without. */
export async function adminCall(url: string, path: string, body?: unknown): Promise<any> {
  const method = body === undefined ? "GET" : "POST";
  const res = await fetch(`${url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A new organization with `balance` USD and a live key made with `key`. */
export async function createTenant(
  url: string,
  balance: string,
  key: Record<string, unknown> = {},
  name = "Console test org",
): Promise<{ key: string; organizationId: string }> {
  const org = await adminCall(url, "/organizations", { name });
  await adminCall(url, `/organizations/${org.organization_id}/top-ups`, { amount_usd: balance });
  const created = await adminCall(url, `/organizations/${org.organization_id}/api-keys`, {
    environment: "live",
    ...key,
  });
  return { key: created.key, organizationId: org.organization_id };
}

/** Submits a 4 s model-d run with `key` through the API; resolves with its id once admitted. */
export async function submitRun(url: string, key: string, prompt = "A test"): Promise<string> {
  const res = await fetch(`${url}/v1/run/lab-d/model-d/reference-to-video`, {
    method: "POST",
    headers: { authorization: `Key ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      input: { prompt, image_urls: ["https://example.com/refs/cat.png"], duration: "4s" },
    }),
  });
  if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
  return (await res.json()).run_id;
}

/** Submits a 4 s model-d run with `key` and waits, on its event stream, for it to succeed. */
export async function runToEnd(url: string, key: string): Promise<string> {
  const runId = await submitRun(url, key);
  // The event stream ends with the run.
  const events = await fetch(`${url}/v1/runs/${runId}/events`, { headers: { authorization: `Key ${key}` } });
  const text = await events.text();
  if (!text.includes('"status":"succeeded"')) throw new Error(`run ${runId} did not succeed: ${text}`);
  return runId;
}

export interface TestPage {
  browser: Browser;
  page: Page;
  /** Requests the page tried to make off 127.0.0.1 (each refused). */
  blocked: string[];
  /** Errors thrown in the page. */
  pageErrors: string[];
}

/** A Chromium page for the console at `url`, with the clipboard allowed and only 127.0.0.1 reachable. */
export async function openPage(url: string): Promise<TestPage> {
  const blocked: string[] = [];
  const pageErrors: string[] = [];
  const browser = await launchTestBrowser();
  // A real browser's language is a valid tag; Chromium run with LANG=C says `en-US@posix`, which
  // Intl refuses (uPlot formats with navigator.language), so the page is given a real one.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  await context.route(
    (u) => u.hostname !== "127.0.0.1",
    (route) => {
      blocked.push(route.request().url());
      return route.abort("blockedbyclient");
    },
  );
  const page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  // What the page's Content-Security-Policy refused: the console must need nothing it forbids.
  page.on("console", (message) => {
    if (message.type() === "error" && /Content Security Policy/i.test(message.text())) {
      pageErrors.push(message.text());
    }
  });
  return { browser, page, blocked, pageErrors };
}

/** Signs the page in to the console with an API key, signing out whoever was in. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/console`);
  const signOut = page.getByRole("button", { name: "Sign out" });
  if (await signOut.isVisible()) await signOut.click();
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Playground" }).waitFor();
}

/** Signs the page in to the console as the operator, signing out whoever was in. */
export async function signInAsOperator(page: Page, url: string): Promise<void> {
  await page.goto(`${url}/console`);
  const signOut = page.getByRole("button", { name: "Sign out" });
  if (await signOut.isVisible()) await signOut.click();
  await page.getByLabel("Operator").check();
  await page.getByLabel("Admin token").fill(ADMIN_TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Organizations" }).waitFor();
}
