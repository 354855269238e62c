import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  launchTestBrowser,
  launchTestBrowserContext,
  requestedKind,
  resolveTestBrowser,
  startTwice,
} from "../src/index.js";

const TIMEOUT = 60_000;

let server: Server;
let base = "";
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(
      "<!doctype html><title>probe</title><h1>refvid</h1><script>document.title = 'ran ' + (6 * 7)</script>",
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

describe("starting", () => {
  it("starts once more after a failed start, and throws the first error when both fail", async () => {
    let starts = 0;
    const crashOnce = () => (++starts === 1 ? Promise.reject(new Error("SIGSEGV")) : Promise.resolve("up"));
    expect(await startTwice(crashOnce)).toBe("up");
    expect(starts).toBe(2);

    starts = 0;
    const never = () => Promise.reject(new Error(`start ${++starts}`));
    await expect(startTwice(never)).rejects.toThrow("start 1");
    expect(starts).toBe(2);

    starts = 0;
    expect(await startTwice(() => Promise.resolve(++starts))).toBe(1);
  });
});

describe("choosing", () => {
  it("reads REFVID_TEST_BROWSER and refuses anything but system or packaged", () => {
    expect(requestedKind({})).toBeUndefined();
    expect(requestedKind({ REFVID_TEST_BROWSER: "" })).toBeUndefined();
    expect(requestedKind({ REFVID_TEST_BROWSER: "system" })).toBe("system");
    expect(requestedKind({ REFVID_TEST_BROWSER: " packaged " })).toBe("packaged");
    expect(() => requestedKind({ REFVID_TEST_BROWSER: "firefox" })).toThrow(/REFVID_TEST_BROWSER.*"firefox"/);
  });

  it("fails loudly, naming the path, when the system browser is forced but missing", async () => {
    await expect(
      resolveTestBrowser({ REFVID_TEST_BROWSER: "system", REFVID_CHROMIUM: "/nonexistent/chromium" }),
    ).rejects.toThrow(/no Chromium at \/nonexistent\/chromium/);
  });

  // The packaged browser may be unpacked here for the first time on this machine: no 5 s budget.
  it(
    "takes the system browser when it is there, the packaged one otherwise",
    async () => {
      const here = await resolveTestBrowser({ REFVID_CHROMIUM: process.execPath });
      expect(here).toMatchObject({ kind: "system", executablePath: process.execPath });
      const none = await resolveTestBrowser({ REFVID_CHROMIUM: "/nonexistent/chromium" });
      expect(none.kind).toBe("packaged");
      expect(none.reason).toContain("/nonexistent/chromium");
      expect(existsSync(none.executablePath)).toBe(true);
    },
    TIMEOUT,
  );
});

describe("the packaged browser", () => {
  it(
    "unpacks once into a versioned folder, also when two callers race for it",
    async () => {
      const saved = process.env.TMPDIR;
      const fresh = mkdtempSync(join(tmpdir(), "refvid-test-browser-"));
      process.env.TMPDIR = fresh;
      try {
        const env = { REFVID_TEST_BROWSER: "packaged" };
        const [a, b] = await Promise.all([resolveTestBrowser(env), resolveTestBrowser(env)]);
        expect(a.executablePath).toBe(b.executablePath);
        expect(a.executablePath.startsWith(join(fresh, "refvid-chromium-"))).toBe(true);
        // One folder in place, no staging folder left behind.
        expect(readdirSync(fresh)).toEqual([a.executablePath.split("/").at(-2)]);
        expect(existsSync(a.env.FONTCONFIG_FILE ?? "")).toBe(true);
      } finally {
        process.env.TMPDIR = saved;
        if (saved === undefined) delete process.env.TMPDIR;
        rmSync(fresh, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );

  it(
    "starts, loads a local page and runs its script",
    async () => {
      const saved = process.env.REFVID_TEST_BROWSER;
      process.env.REFVID_TEST_BROWSER = "packaged";
      try {
        const browser = await launchTestBrowser();
        try {
          expect(browser.version()).toMatch(/^\d+\./);
          const page = await browser.newPage();
          await page.goto(`${base}/`);
          await expect(page.locator("h1").innerText()).resolves.toBe("refvid");
          await expect(page.title()).resolves.toBe("ran 42");
        } finally {
          await browser.close();
        }
      } finally {
        if (saved === undefined) delete process.env.REFVID_TEST_BROWSER;
        else process.env.REFVID_TEST_BROWSER = saved;
      }
    },
    TIMEOUT,
  );

  it(
    "starts with a persistent profile and opens several pages",
    async () => {
      const profile = mkdtempSync(join(tmpdir(), "refvid-test-profile-"));
      const saved = process.env.REFVID_TEST_BROWSER;
      process.env.REFVID_TEST_BROWSER = "packaged";
      try {
        const context = await launchTestBrowserContext(profile);
        try {
          const pages = [context.pages()[0] ?? (await context.newPage()), await context.newPage()];
          for (const page of pages) {
            await page.goto(`${base}/`);
            await expect(page.title()).resolves.toBe("ran 42");
          }
        } finally {
          await context.close();
        }
      } finally {
        if (saved === undefined) delete process.env.REFVID_TEST_BROWSER;
        else process.env.REFVID_TEST_BROWSER = saved;
        rmSync(profile, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );
});
