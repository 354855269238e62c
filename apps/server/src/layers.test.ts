/**
 * Imports point down only: every module of the server imports from its own layer or one below,
 * never from one above. The order is written once, in docs/architecture.md ("Layers of the
 * server"), and read from there; a file in no layer fails too, so a new folder gets a place.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(SRC, "../../..");

/** The layers, bottom first: each a list of entries, a folder (`net/`) or a file (`clock.ts`). */
function layerOrder(): string[][] {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const block = /```text layers\n([\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error("docs/architecture.md has no ```text layers block");
  return block
    .split("\n")
    .map((line) => line.replace(/#.*/, "").trim())
    .filter(Boolean)
    .map((line) =>
      line
        .replace(/^\d+\.\s*/, "")
        .split(/[\s,]+/)
        .filter(Boolean),
    );
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") &&
      !entry.name.endsWith(".test.ts") &&
      !entry.name.endsWith(".contract.ts")
      ? [path]
      : [];
  });
}

/** The relative modules a file imports or re-exports, `import type` included. */
function importsOf(file: string, text = readFileSync(file, "utf8")): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?\sfrom\s+"(\.[^"]+)"/g)) {
    found.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, ".ts")));
  }
  for (const match of text.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g)) {
    found.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, ".ts")));
  }
  return found;
}

describe("the server's layers", () => {
  const layers = layerOrder();
  const layerOf = (file: string): number => {
    const path = relative(SRC, file).split("\\").join("/");
    return layers.findIndex((entries) =>
      entries.some((entry) => (entry.endsWith("/") ? path.startsWith(entry) : path === entry)),
    );
  };
  const files = sourceFiles(SRC);

  it("places every source file in a layer", () => {
    const unplaced = files.filter((file) => layerOf(file) < 0).map((file) => relative(SRC, file));
    expect(unplaced, "add these to the layers block of docs/architecture.md").toEqual([]);
  });

  it("has no import that points up", () => {
    const upward: string[] = [];
    for (const file of files) {
      for (const target of importsOf(file)) {
        if (layerOf(target) > layerOf(file)) {
          upward.push(`${relative(SRC, file)} -> ${relative(SRC, target)}`);
        }
      }
    }
    expect(upward).toEqual([]);
  });

  it("reads every form of import, and the order bottom first", () => {
    const file = join(SRC, "worker/x.ts");
    const text = `import type { A } from "../deps.js";
import {
  b,
  c,
} from "./stops.js";
export { d } from "../http/auth.js";
const e = await import("../app.js");
import { f } from "@refvid/core";`;
    expect(importsOf(file, text).map((path) => relative(SRC, path))).toEqual([
      "deps.ts",
      "worker/stops.ts",
      "http/auth.ts",
      "app.ts",
    ]);
    expect(layerOf(join(SRC, "clock.ts"))).toBeLessThan(layerOf(join(SRC, "http/auth.ts")));
    expect(layerOf(join(SRC, "deps.ts"))).toBeLessThan(layerOf(join(SRC, "worker/stops.ts")));
  });
});

/** Which workspace packages each package may import (docs/architecture.md, "Layers of the server"). */
const PACKAGE_IMPORTS: [string, string[]][] = [
  ["packages/core/src", ["api-types"]],
  ["packages/store/src", ["api-types", "core"]],
  ["packages/client/src", ["api-types", "client"]],
  ["packages/sdk/src", ["api-types"]],
];

describe("the packages' layers", () => {
  it.each(PACKAGE_IMPORTS)("%s imports only %j of the workspace", (dir, allowed) => {
    const wrong: string[] = [];
    for (const file of sourceFiles(join(ROOT, dir))) {
      for (const match of readFileSync(file, "utf8").matchAll(/from\s+"@refvid\/([a-z-]+)/g)) {
        if (!allowed.includes(match[1] as string))
          wrong.push(`${relative(ROOT, file)} -> @refvid/${match[1]}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});
