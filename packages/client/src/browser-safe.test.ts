import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { walkImports } from "../test/import-graph.js";

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));

describe("runs outside Node", () => {
  it.each(["./index.ts", "./webhooks.ts"])(
    "nothing %s loads imports a Node built-in, dependencies included",
    (entry) => {
      const graph = walkImports(path(entry));
      expect(graph.builtins).toEqual([]);
      // The walk reaches past this package: openapi-fetch and the built @refvid/api-types.
      if (entry === "./index.ts") {
        expect(graph.files).toContain(path("./client.ts"));
        expect(graph.files.some((f) => f.includes("openapi-fetch"))).toBe(true);
        expect(graph.files.some((f) => /api-types[/\\]dist[/\\]index\.js$/.test(f))).toBe(true);
      } else {
        expect(graph.files).toContain(path("./random.ts"));
      }
    },
  );

  it("only the Node entry, @refvid/client/node, uses Node's file system, and the main entry never loads it", () => {
    const graph = walkImports(path("./node.ts"));
    expect(graph.builtins.map((b) => b.specifier).sort()).toEqual([
      "node:fs",
      "node:fs/promises",
      "node:path",
    ]);
    expect(walkImports(path("./index.ts")).files).not.toContain(path("./node.ts"));
  });

  it("the walk finds a built-in behind a relative import, and ignores a type-only one", () => {
    const graph = walkImports(path("../test/fixtures/entry.ts"));
    expect(graph.builtins).toEqual([
      { specifier: "node:crypto", from: path("../test/fixtures/uses-node.ts") },
    ]);
  });
});
