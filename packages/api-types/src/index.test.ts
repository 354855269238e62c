import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { components, paths } from "./generated/schema.js";
import type { ModelInputs, ModelSlug, Run, RunPage } from "./index.js";

/** The modules a TypeScript file imports at run time, as its compiled JavaScript would. */
function runtimeImports(file: URL): string[] {
  const { outputText } = ts.transpileModule(readFileSync(file, "utf8"), {
    compilerOptions: {
      module: ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      verbatimModuleSyntax: true,
    },
  });
  const source = ts.createSourceFile("out.js", outputText, ts.ScriptTarget.ES2022);
  return source.statements.flatMap((statement) =>
    (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
    statement.moduleSpecifier &&
    ts.isStringLiteral(statement.moduleSpecifier)
      ? [statement.moduleSpecifier.text]
      : [],
  );
}

describe("the main entry", () => {
  it("imports nothing at run time, so browsers and edge runtimes can load it", () => {
    expect(runtimeImports(new URL("./index.ts", import.meta.url))).toEqual([]);
    // The check itself sees runtime imports: the Node-only entry has two.
    expect(runtimeImports(new URL("./document.ts", import.meta.url))).toEqual(["node:fs", "node:url"]);
  });

  it("names each model's input exactly as the spec types it", () => {
    type SpecInputs = {
      [S in ModelSlug]: NonNullable<
        paths[`/v1/run/${S}`]["post"]["requestBody"]
      >["content"]["application/json"]["input"];
    };
    expectTypeOf<keyof ModelInputs>().toEqualTypeOf<ModelSlug>();
    expectTypeOf<ModelInputs>().toEqualTypeOf<SpecInputs>();
  });

  it("keeps the named types interchangeable with the generated ones", () => {
    expectTypeOf<Run>().toEqualTypeOf<components["schemas"]["Run"]>();
    expectTypeOf<RunPage>().toEqualTypeOf<components["schemas"]["RunPage"]>();
  });
});
