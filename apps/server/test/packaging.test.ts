/**
 * The published packages, used as a new user would: `npm pack` @refvid/api-types, @refvid/client
 * and @refvid/sdk, install the tarballs into an empty project (no workspace links, nothing from the
 * network), type-check a consumer with strict `tsc`, and run it against a real server, in Node and
 * in a real browser.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { launchTestBrowser } from "@refvid/test-browser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConsumerOptions, ConsumerReport } from "./consumer/main.js";
import { type Receiver, startReceiver, type Tenant, useTestRefvid } from "./harness.js";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../../..");
const PACKAGES = ["api-types", "client", "sdk"] as const;
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const t = useTestRefvid();

let project: string;
let tarballs: { name: string; size: number; files: number }[];
let tenant: Tenant;
let receiver: Receiver;
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "refvid-consumer-"));
  tarballs = [];
  const dependencies: Record<string, string> = {};
  for (const name of PACKAGES) {
    const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", project], {
      cwd: join(ROOT, "packages", name),
    });
    const [packed] = JSON.parse(stdout) as {
      name: string;
      filename: string;
      size: number;
      entryCount: number;
    }[];
    if (!packed) throw new Error(`npm pack of ${name} reported nothing`);
    tarballs.push({ name: packed.name, size: packed.size, files: packed.entryCount });
    dependencies[packed.name] = `file:./${packed.filename}`;
  }
  // Nothing from the network: the packages' own dependencies (openapi-fetch, zod, …) are packed
  // from the workspace's installed copies and installed from those tarballs too.
  for (const dir of await thirdPartyClosure(PACKAGES.map((name) => join(ROOT, "packages", name)))) {
    const { stdout } = await run("npm", ["pack", dir, "--json", "--pack-destination", project], {
      cwd: project,
    });
    const [packed] = JSON.parse(stdout) as { name: string; filename: string }[];
    if (packed) dependencies[packed.name] = `file:./${packed.filename}`;
  }
  await writeFile(
    join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module", dependencies }),
  );
  await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], { cwd: project });
  await cp(join(import.meta.dirname, "consumer/tsconfig.json"), join(project, "tsconfig.json"));
  for (const file of ["main.ts", "sdk.ts"]) {
    await cp(join(import.meta.dirname, "consumer", file), join(project, "src", file));
  }
  tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
  receiver = await startReceiver();
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  if (project) await rm(project, { recursive: true, force: true });
});

/** The test page's module: the consumer, with the page's origin as the server and its delivery from the test. */
const PAGE_SCRIPT = `import { main } from "/__consumer/main.js";
globalThis.consumer = (options) => main({ ...options, baseUrl: location.origin,
  delivery: () => fetch("/__consumer/delivery").then((r) => r.json()) });`;

/** The `n`th webhook delivery (1-based): the Node consumer's run delivers first, the browser's second. */
const delivery = (n: number) => async () => {
  const received = (await receiver.waitFor(n))[n - 1];
  if (!received) throw new Error(`webhook ${n} did not arrive`);
  return { body: received.body, headers: received.headers as Record<string, string> };
};

/** Folders of the installed third-party packages `packageDirs` depend on, with theirs, transitively. */
async function thirdPartyClosure(packageDirs: string[]): Promise<string[]> {
  const found = new Map<string, string>();
  const visit = async (dir: string) => {
    const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    for (const name of Object.keys(manifest.dependencies ?? {})) {
      if (name.startsWith("@refvid/") || found.has(name)) continue;
      const installed = [join(dir, "node_modules", name), join(ROOT, "node_modules", name)].find((d) =>
        existsSync(join(d, "package.json")),
      );
      if (!installed) throw new Error(`${name}, a dependency of ${dir}, is not installed`);
      found.set(name, installed);
      await visit(installed);
    }
  };
  for (const dir of packageDirs) await visit(dir);
  return [...found.values()];
}

/** Bare module specifiers imported by the JavaScript files under `dir`. */
async function bareImports(dir: string): Promise<Set<string>> {
  const specifiers = new Set<string>();
  for (const file of await readdir(dir, { recursive: true })) {
    if (!file.endsWith(".js")) continue;
    const code = await readFile(join(dir, file), "utf8");
    for (const [, spec] of code.matchAll(/(?:from|import)\s*\(?\s*["']([^"'.][^"']*)["']/g)) {
      const name = spec?.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec?.split("/")[0];
      if (name) specifiers.add(name);
    }
  }
  return specifiers;
}

/** What the consumer must see, wherever it runs. */
function expectReport(report: ConsumerReport) {
  expect(report.models).toEqual([
    "lab-a/model-a/reference-to-video",
    "lab-b/model-b/reference-to-video",
    "lab-c/model-c/reference-to-video",
    "lab-d/model-d/reference-to-video",
  ]);
  expect(report.run).toMatchObject({ status: "succeeded", amount: "0.284" });
  expect(report.run.videoUrl).toMatch(/\/v1\/files\//);
  expect(report.failure).toBe("RunFailedError failed");
  expect(report.streamed.at(-1)).toBe("succeeded");
  expect(report.listed).toHaveLength(3);
  expect(new Set(report.listed).size).toBe(3);
  expect(report.webhook).toEqual({ type: "run.succeeded", runId: report.run.id });
}

describe("the packed packages", () => {
  it("are publishable tarballs with their code, types, README and license", async () => {
    for (const name of PACKAGES) {
      const manifest = JSON.parse(
        await readFile(join(project, "node_modules/@refvid", name, "package.json"), "utf8"),
      );
      expect(manifest.private, name).toBeUndefined();
      expect(manifest).toMatchObject({ license: "MIT", repository: { directory: `packages/${name}` } });
      expect(manifest.version).toMatch(/^\d+\.\d+\.\d+/);
      // Every package its code imports is a declared dependency (or itself): nothing works only by hoisting.
      const declared = new Set([name, `@refvid/${name}`, ...Object.keys(manifest.dependencies ?? {})]);
      const imported = await bareImports(join(project, "node_modules/@refvid", name, "dist"));
      expect(
        [...imported].filter((spec) => !declared.has(spec) && !spec.startsWith("node:")),
        name,
      ).toEqual([]);
      for (const file of ["README.md", "LICENSE", "dist/index.js", "dist/index.d.ts"]) {
        await expect(
          readFile(join(project, "node_modules/@refvid", name, file)),
          `${name}/${file}`,
        ).resolves.toBeTruthy();
      }
    }
    process.stderr.write(
      `tarballs: ${tarballs.map((p) => `${p.name} ${p.size} B (${p.files} files)`).join(", ")}\n`,
    );
  });

  it("type-check a consumer with strict tsc and no Node types", async () => {
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: project }).catch(
      (error: { stdout?: string; stderr?: string }) => ({
        stdout: error.stdout ?? "",
        stderr: error.stderr ?? "",
      }),
    );
    expect(`${result.stdout}${result.stderr}`.trim()).toBe("");
  });

  it("run the consumer in Node against the real server: submit, wait, fail, paginate, verify a webhook", async () => {
    const consumer = (await import(pathToFileURL(join(project, "dist/main.js")).href)) as {
      main(options: ConsumerOptions): Promise<ConsumerReport>;
    };
    const report = await consumer.main({
      baseUrl: t.url,
      apiKey: tenant.apiKey,
      webhookUrl: `${receiver.url}/hook`,
      delivery: delivery(1),
    });
    expectReport(report);
    process.stderr.write(`consumer in Node: ${JSON.stringify(report)}\n`);

    const sdk = (await import(pathToFileURL(join(project, "dist/sdk.js")).href)) as {
      sdkMain(baseUrl: string, apiKey: string): Promise<{ models: string[]; status: string }>;
    };
    expect(await sdk.sdkMain(t.url, tenant.apiKey)).toMatchObject({ models: report.models });
  });
});

describe("the packed client in a browser", () => {
  let browser: Awaited<ReturnType<typeof launchTestBrowser>> | undefined;
  afterAll(async () => browser?.close());

  it("runs the same consumer to completion against the real server", async () => {
    browser = await launchTestBrowser({ timeout: 30_000 });
    const page = await browser.newPage();
    const modules = join(project, "node_modules");
    const files: Record<string, string> = {
      "/__consumer/main.js": join(project, "dist/main.js"),
      "/__consumer/client/": join(modules, "@refvid/client/dist/"),
      "/__consumer/api-types/": join(modules, "@refvid/api-types/dist/"),
      "/__consumer/openapi-fetch.js": join(modules, "openapi-fetch/dist/index.mjs"),
      "/__consumer/eventsource-parser.js": join(modules, "eventsource-parser/dist/index.js"),
    };
    const importMap = {
      imports: {
        "@refvid/client": "/__consumer/client/index.js",
        "@refvid/api-types": "/__consumer/api-types/index.js",
        "openapi-fetch": "/__consumer/openapi-fetch.js",
        "eventsource-parser": "/__consumer/eventsource-parser.js",
      },
    };
    // The page and the installed modules are served on refvid's own origin, so the client's calls
    // are same-origin; everything else goes to the real server, and nothing leaves the machine.
    await page.route(
      (url) => url.pathname.startsWith("/__consumer/"),
      async (route) => {
        const { pathname } = new URL(route.request().url());
        if (pathname === "/__consumer/") {
          return route.fulfill({
            contentType: "text/html",
            body: `<!doctype html><script type="importmap">${JSON.stringify(importMap)}</script><script type="module">${PAGE_SCRIPT}</script>`,
          });
        }
        if (pathname === "/__consumer/delivery") return route.fulfill({ json: await delivery(2)() });
        const prefix = Object.keys(files).find(
          (p) => pathname === p || (p.endsWith("/") && pathname.startsWith(p)),
        );
        if (!prefix) return route.fulfill({ status: 404 });
        const file = prefix.endsWith("/")
          ? join(files[prefix] as string, pathname.slice(prefix.length))
          : files[prefix];
        return route.fulfill({ path: file as string, contentType: "text/javascript" });
      },
    );
    await page.route(
      (url) => !url.href.startsWith(t.url),
      (route) => route.abort("blockedbyclient"),
    );
    await page.goto(`${t.url}/__consumer/`);
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));

    await page.waitForFunction(() => "consumer" in globalThis);
    const report = (await page.evaluate(
      ({ apiKey, webhookUrl }) =>
        (globalThis as unknown as { consumer(o: object): Promise<unknown> }).consumer({
          apiKey,
          webhookUrl,
        }),
      { apiKey: tenant.apiKey, webhookUrl: `${receiver.url}/hook` },
    )) as ConsumerReport;
    expect(errors).toEqual([]);
    expectReport(report);
    process.stderr.write(`consumer in the browser: ${JSON.stringify(report)}\n`);
  });
});
