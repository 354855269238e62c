/**
 * Checks the built API reference (dist/index.html) against the OpenAPI bundle.
 *
 * `redocly build-docs` (Redoc 3) pre-renders only the landing page: the overview (info, servers)
 * and the sidebar's top level (one entry per tag). Operations and webhooks are rendered in the
 * browser, by the inlined Redoc bundle, from the definition embedded in the page. So the
 * operations are checked in the embedded definition, which must equal the bundle, and the page
 * must carry the Redoc bundle inline. Rendering in a real browser is checked by render.test.ts.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { beforeAll, describe, expect, it } from "vitest";
import { docsHtmlPath } from "../index.js";

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
}
interface Bundle {
  info: { title: string; version: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
}

const require = createRequire(import.meta.url);
const bundle = JSON.parse(readFileSync(require.resolve("@refvid/api-types/openapi.json"), "utf8")) as Bundle;

const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);
const operations = Object.entries(bundle.paths).flatMap(([path, item]) =>
  Object.entries(item)
    .filter(([method]) => HTTP_METHODS.has(method))
    .map(([method, op]) => ({ path, method, op })),
);

let html = "";
/** The server-side rendered markup: the content of `<div id="redoc">`, before the scripts. */
let prerendered = "";
let definition: Bundle;
let redocOptions: Record<string, unknown>;

/** `text` as it appears inside a JSON string literal embedded in the page. */
const asJsonText = (text: string) => JSON.stringify(text).slice(1, -1).replace(/</g, "\\u003c");

/** Text of HTML markup, entities decoded (enough for the entities React emits). */
const textOf = (markup: string) =>
  markup
    .replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/g, " ")
    .replace(/<[^>]+>/g, " ")
    .replace(/&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

beforeAll(() => {
  if (!existsSync(docsHtmlPath)) {
    throw new Error(`${docsHtmlPath} is missing: run \`npm run build -w @refvid/docs\` first.`);
  }
  html = readFileSync(docsHtmlPath, "utf8");

  const start = html.indexOf('<div id="redoc">');
  const end = html.indexOf('<script type="module">', start);
  expect(start, 'no <div id="redoc"> in the page').toBeGreaterThanOrEqual(0);
  expect(end, "no module script after the pre-rendered markup").toBeGreaterThan(start);
  prerendered = html.slice(start, end);

  const embedded = /const __redoc_definition = (.*);\n\s*const __redoc_options = (.*);\n/.exec(html);
  if (embedded?.[1] === undefined || embedded[2] === undefined) {
    throw new Error("the page embeds no __redoc_definition / __redoc_options");
  }
  definition = JSON.parse(embedded[1]) as Bundle;
  redocOptions = JSON.parse(embedded[2]) as Record<string, unknown>;
});

describe("the built page", () => {
  it("embeds exactly the OpenAPI bundle", () => {
    expect(definition).toEqual(bundle);
  });

  it("documents every operation: operationId and summary", () => {
    expect(operations.length).toBeGreaterThan(0);
    const embeddedOperations = new Map(
      Object.values(definition.paths)
        .flatMap((item) => Object.values(item))
        .map((op) => [op.operationId, op] as const),
    );
    for (const { path, method, op } of operations) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, `${where} has no operationId`).toBeTruthy();
      expect(op.summary, `${where} has no summary`).toBeTruthy();
      const operationId = op.operationId ?? "";
      const summary = op.summary ?? "";
      expect(embeddedOperations.get(operationId)?.summary, where).toBe(summary);
      expect(html.includes(`"operationId":"${asJsonText(operationId)}"`), `${operationId} in the page`).toBe(
        true,
      );
      expect(html.includes(`"summary":"${asJsonText(summary)}"`), `${operationId} summary in the page`).toBe(
        true,
      );
    }
  });

  it("documents the run.terminal webhook", () => {
    expect(Object.keys(bundle.webhooks)).toContain("run.terminal");
    expect(Object.keys(definition.webhooks)).toContain("run.terminal");
    expect(html).toContain('"webhooks":{"run.terminal":');
  });

  it("pre-renders the overview and one sidebar entry per tag, Admin included", () => {
    const text = textOf(prerendered);
    expect(text).toContain(`${bundle.info.title} (${bundle.info.version})`);
    const tagNames = bundle.tags.map((tag) => tag.name);
    expect(tagNames).toContain("Admin");
    for (const name of tagNames) {
      expect(prerendered, `sidebar entry for tag ${name}`).toContain(`data-text="${name}"`);
    }
    expect(operations.filter(({ op }) => op.tags?.includes("Admin")).length).toBeGreaterThan(0);
  });

  it("inlines the Redoc bundle and loads no script, style or font from the network", () => {
    expect(html).toContain("const{RedocStandalone,hydrate,init}=");
    expect(html).toContain("hydrate(__redoc_definition, __redoc_options, document.getElementById('redoc'));");
    expect(html).not.toMatch(/import\s*\{[^}]*\}\s*from\s*["']https?:/);
    expect(html).not.toMatch(/<script[^>]*\ssrc=/i);
    expect(html).not.toMatch(/<link[^>]*\shref=["']https?:/i);
    expect(html).not.toMatch(/url\(\s*["']?https?:/i);
    expect(html).not.toMatch(/@import\s+(url\()?["']?https?:/i);
  });

  it("has been through scripts/postbuild.mjs: no logo from Redocly's CDN, hash-route links, the serving origin", () => {
    expect(html).not.toContain("https://cdn.redoc.ly/");
    expect(prerendered).toContain('href="#/admin"');
    expect(prerendered).not.toMatch(/<a\s[^>]*\bhref="\/(?!\/)/);
    // The server's address is set to the serving origin before Redoc hydrates (server-box.test.ts).
    expect(html).toMatch(
      /base_url\.default = location\.origin \+ prefix;\s*\}\s*hydrate\(__redoc_definition/,
    );
  });

  it("turns Redoc's browser telemetry off", () => {
    expect(redocOptions.disableTelemetry).toBe(true);
  });
});
