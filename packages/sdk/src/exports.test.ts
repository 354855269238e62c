/**
 * The SDK's surface: a function for every operation of the bundle, schemas that accept the bundle's
 * examples, the generated files' header, and export names that neither shadow a global nor clash
 * with `@refvid/client`'s.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import type { ZodType } from "zod";
import { bundle, bundleOperations, deref, operationsOf } from "../test/bundle.js";
import * as generatedOperations from "./generated/sdk.gen.js";
import * as sdkModule from "./index.js";
import { createRefvidSdk } from "./index.js";

describe("the SDK covers the bundle", () => {
  const operationIds = bundleOperations.map(({ op }) => op.operationId);

  it("every operation of the bundle has an operationId", () => {
    expect(operationIds.length).toBeGreaterThan(0);
    expect(operationIds.every((id) => typeof id === "string" && id.length > 0)).toBe(true);
  });

  it("has a function for every operationId (module exports and createRefvidSdk)", () => {
    const sdk = createRefvidSdk({ baseUrl: "http://127.0.0.1:1" });
    const exported = sdkModule as unknown as Record<string, unknown>;
    const bound = sdk as unknown as Record<string, unknown>;
    const missing = operationIds.filter(
      (id) => typeof exported[id ?? ""] !== "function" || typeof bound[id ?? ""] !== "function",
    );
    expect(missing).toEqual([]);
  });

  it("generates no function for an operation that is not in the bundle", () => {
    const generated = Object.entries(generatedOperations)
      .filter(([, value]) => typeof value === "function")
      .map(([name]) => name)
      .sort();
    expect(generated).toEqual([...operationIds].sort());
  });

  it("the Admin operations (AdminToken) are exactly the paths under /admin/", () => {
    // createRefvidSdk picks the admin token by the `/admin/` URL prefix; keep that true.
    for (const { path, op } of bundleOperations) {
      const usesAdminToken = (op.security ?? []).some((requirement) => "AdminToken" in requirement);
      expect({ path, usesAdminToken }).toEqual({ path, usesAdminToken: path.startsWith("/admin/") });
    }
  });

  it("every JSON example in the bundle passes the generated zod schemas", () => {
    const schemas = sdkModule as unknown as Record<string, ZodType | undefined>;
    /** The component schema names a media type's schema refers to (`$ref`, or anyOf/oneOf of `$ref`s). */
    const schemaNames = (schema: unknown): string[] => {
      const s = schema as { $ref?: string; anyOf?: unknown[]; oneOf?: unknown[] } | undefined;
      if (s?.$ref?.startsWith("#/components/schemas/")) return [s.$ref.slice("#/components/schemas/".length)];
      return [...(s?.anyOf ?? []), ...(s?.oneOf ?? [])].flatMap(schemaNames);
    };
    const failures: string[] = [];
    let checked = 0;
    const checkContent = (where: string, container: unknown) => {
      const content = (deref(container) as { content?: Record<string, unknown> } | undefined)?.content ?? {};
      for (const [mediaType, media] of Object.entries(content)) {
        if (!mediaType.includes("json")) continue;
        const { schema, examples = {} } = media as { schema?: unknown; examples?: Record<string, unknown> };
        const validators = schemaNames(schema).map((name) => {
          const validator = schemas[`z${name}`];
          if (validator === undefined) throw new Error(`${where}: no generated schema z${name}`);
          return validator;
        });
        if (validators.length === 0) continue;
        for (const [exampleName, ex] of Object.entries(examples)) {
          const { value } = deref(ex) as { value: unknown };
          checked++;
          if (!validators.some((validator) => validator.safeParse(value).success)) {
            failures.push(`${where} ${mediaType} example ${exampleName}`);
          }
        }
      }
    };
    const all = [
      ...bundleOperations.map((entry) => ({ ...entry, label: entry.op.operationId ?? entry.path })),
      ...operationsOf(bundle.webhooks).map((entry) => ({ ...entry, label: `webhook ${entry.path}` })),
    ];
    for (const { label, op } of all) {
      if (op.requestBody !== undefined) checkContent(`${label} request`, op.requestBody);
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        checkContent(`${label} ${status}`, response);
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it("every generated file begins with the do-not-edit header", () => {
    const dir = fileURLToPath(new URL("./generated/", import.meta.url));
    const files = readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(5);
    const withoutHeader = files.filter((file) => {
      const [first, second] = readFileSync(file, "utf8").split("\n", 2);
      return !(
        first === "// This file is auto-generated by @hey-api/openapi-ts" &&
        second?.startsWith("// DO NOT EDIT.")
      );
    });
    expect(withoutHeader).toEqual([]);
  });
});

describe("export names", () => {
  /** Export names of a module, types included, read with the TypeScript compiler. */
  let exportsOf: (file: string) => string[];
  let isGlobal: (name: string) => boolean;
  let sdkIndex: string;
  let clientTypes: string;
  let generatedFiles: string[];

  beforeAll(() => {
    const configPath = fileURLToPath(new URL("../tsconfig.json", import.meta.url));
    const config = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, join(configPath, ".."));
    sdkIndex = fileURLToPath(new URL("./index.ts", import.meta.url));
    // `@refvid/client` as a user gets it: the declaration file its package exports.
    const resolved = ts.resolveModuleName(
      "@refvid/client",
      sdkIndex,
      options,
      ts.sys,
      undefined,
      undefined,
      ts.ModuleKind.ESNext,
    );
    if (resolved.resolvedModule === undefined)
      throw new Error("@refvid/client did not resolve; build it first");
    clientTypes = resolved.resolvedModule.resolvedFileName;

    const program = ts.createProgram([sdkIndex, clientTypes], { ...options, noEmit: true });
    const checker = program.getTypeChecker();
    const generatedDir = fileURLToPath(new URL("./generated/", import.meta.url));
    generatedFiles = program
      .getSourceFiles()
      .map((file) => file.fileName)
      .filter((file) => file.startsWith(generatedDir));
    exportsOf = (file) => {
      const source = program.getSourceFile(file);
      const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
      if (symbol === undefined) throw new Error(`${file} is not a module of the program`);
      return checker.getExportsOfModule(symbol).map((exported) => exported.name);
    };
    // Resolved from no location, a name finds only globals (lib.es2023, lib.dom, @types/node).
    isGlobal = (name) =>
      checker.resolveName(name, undefined, ts.SymbolFlags.Type | ts.SymbolFlags.Value, false) !== undefined;
  }, 60_000);

  it("no SDK export and no generated export is named after a global such as `Error`", () => {
    expect(isGlobal("Error")).toBe(true); // the check can see the globals
    expect(generatedFiles.length).toBeGreaterThan(5);
    const names = [sdkIndex, ...generatedFiles].flatMap(exportsOf);
    expect(names).toEqual(expect.arrayContaining(["zError", "getRun", "createRefvidSdk"]));
    expect(names).not.toContain("Error");
    expect([...new Set(names.filter(isGlobal))]).toEqual([]);
  });

  it("no SDK export has the name of a `@refvid/client` export", () => {
    const clientNames = exportsOf(clientTypes);
    expect(clientNames).toEqual(
      expect.arrayContaining(["RefvidError", "ValidationError", "Run", "createRefvidClient"]),
    );
    const sdkNames = new Set(exportsOf(sdkIndex));
    expect(clientNames.filter((name) => sdkNames.has(name))).toEqual([]);
  });
});
