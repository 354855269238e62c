/**
 * Post-build step of `npm run build`: two fixes to the page `redocly build-docs` writes (Redoc 3.0.1).
 *
 * 1. It loads nothing from another host. Redoc draws an "API docs by Redocly" badge in the sidebar
 *    whose logo is an <img> on cdn.redoc.ly, so every reader's browser would fetch it (and log a
 *    console error where there is no internet). The two logo URLs become inline SVG data: URIs.
 * 2. Its links work under /docs. The pre-rendered links are root paths (`href="/admin"`), but the
 *    page in the browser routes by hash (`#/admin`), and React's hydration keeps the pre-rendered
 *    attributes: a click works (Redoc handles it), while opening a link in a new tab or copying it
 *    gives `/admin` at the site root, which is not the docs. The pre-rendered root-path links
 *    become the hash routes the browser renders.
 *
 * 3. Its server box names the server serving it. The document's one server is `{base_url}`, whose
 *    default (http://localhost:8080, where `npm start` serves) would be shown whatever origin serves
 *    the page. Before Redoc hydrates, a few lines set that default to the serving origin, with any
 *    path before `/docs` (a server behind a path prefix). The default is not in the pre-rendered
 *    markup (the variable is folded away), so hydration finds what the server rendered. A page
 *    opened from a file keeps the document's default.
 *
 * It fails the build when the page no longer has what it rewrites, so a Redoc upgrade that changes
 * it is noticed here (test/render.test.ts checks the result in Chromium).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const page = fileURLToPath(new URL("../dist/index.html", import.meta.url));
let html = readFileSync(page, "utf8");

/** An SVG image as a data: URI. */
const svg = (width, height, body) =>
  `data:image/svg+xml;base64,${Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${body}</svg>`,
  ).toString("base64")}`;

const text = (x, y, size, content) =>
  `<text x="${x}" y="${y}" font-family="Helvetica,Arial,sans-serif" font-size="${size}" font-weight="700" fill="#0044D4">${content}</text>`;

const logos = [
  // Shown in the expanded sidebar, 12 px high, after the words "API docs by".
  ["https://cdn.redoc.ly/redoc/logo-mini-full.svg", svg(44, 12, text(0, 10, 11, "Redocly"))],
  // Shown in the collapsed sidebar, 14 px high.
  ["https://cdn.redoc.ly/redoc/logo-mini.svg", svg(14, 14, text(2, 12, 13, "R"))],
];
for (const [url, replacement] of logos) {
  const count = html.split(url).length - 1;
  if (count !== 1) throw new Error(`${page}: expected exactly one ${url} in Redoc's bundle, found ${count}`);
  html = html.replace(url, replacement);
}

// The pre-rendered markup: the content of <div id="redoc">, before the module script.
const start = html.indexOf('<div id="redoc">');
const end = html.indexOf('<script type="module">', start);
if (start < 0 || end < 0)
  throw new Error(`${page}: no pre-rendered <div id="redoc"> before the module script`);
let rootLinks = 0;
const prerendered = html.slice(start, end).replace(/(<a\s[^>]*?\bhref=")\/(?!\/)/g, (_, head) => {
  rootLinks += 1;
  return `${head}#/`;
});
if (rootLinks === 0) throw new Error(`${page}: no pre-rendered root-path link to turn into a hash route`);
html = html.slice(0, start) + prerendered + html.slice(end);

const hydrateCall = "hydrate(__redoc_definition, __redoc_options, document.getElementById('redoc'));";
if (html.split(hydrateCall).length !== 2)
  throw new Error(`${page}: expected exactly one ${hydrateCall} to put the serving origin before`);
const servingOrigin = `// The server box shows the origin serving this page (apps/docs/scripts/postbuild.mjs).
      if (/^https?:$/.test(location.protocol)) {
        const prefix = /^(.*)\\/docs(\\/[^/]*)?$/.exec(location.pathname)?.[1] ?? "";
        for (const server of __redoc_definition.servers ?? [])
          if (server.variables?.base_url) server.variables.base_url.default = location.origin + prefix;
      }
      `;
html = html.replace(hydrateCall, () => servingOrigin + hydrateCall);

writeFileSync(page, html);
