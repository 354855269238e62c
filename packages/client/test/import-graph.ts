/**
 * The modules an entry point loads at run time, found the way a bundler or runtime would: each
 * TypeScript file is compiled as the build compiles it (so type-only imports disappear), and
 * packages resolve through their `exports`, preferring `browser`, then `import`, then `default`.
 */
import { existsSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve } from "node:path";
import ts from "typescript";

/** What {@link walkImports} found. */
export interface ImportGraph {
  /** Absolute paths of every file loaded, the entry included. */
  files: string[];
  /** Node built-in modules imported (`node:fs`, or a bare `fs`), each with the file importing it. */
  builtins: Array<{ specifier: string; from: string }>;
}

const NODE_BUILTINS: ReadonlySet<string> = new Set(builtinModules);

/** The specifiers `file` imports when it runs: static imports, re-exports and literal `import()`. */
function runtimeSpecifiers(file: string): string[] {
  let code = readFileSync(file, "utf8");
  if (file.endsWith(".ts")) {
    code = ts.transpileModule(code, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    }).outputText;
  }
  const specifiers: string[] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, code, ts.ScriptTarget.ES2022, true));
  return specifiers;
}

/** The file a relative specifier names: `./x.js` in a TypeScript source is `./x.ts`. */
function resolveRelative(specifier: string, from: string): string {
  const target = resolve(dirname(from), specifier);
  if (existsSync(target)) return target;
  const source = target.replace(/\.js$/, ".ts");
  if (existsSync(source)) return source;
  throw new Error(`cannot resolve ${specifier} from ${from}`);
}

type Exports = string | { [condition: string]: Exports } | null;

function pickExport(entry: Exports): string | undefined {
  if (typeof entry === "string" || entry === null) return entry ?? undefined;
  for (const condition of ["browser", "import", "default"]) {
    const picked = entry[condition] === undefined ? undefined : pickExport(entry[condition]);
    if (picked !== undefined) return picked;
  }
  return undefined;
}

/** The file a package specifier names, from the nearest `node_modules` that has the package. */
function resolvePackage(specifier: string, from: string): string {
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? "");
  const subpath = `.${specifier.slice(name.length)}`;
  for (let dir = dirname(from); ; dir = dirname(dir)) {
    const root = join(dir, "node_modules", name);
    if (existsSync(join(root, "package.json"))) {
      const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        exports?: Exports | Record<string, Exports>;
        module?: string;
        main?: string;
      };
      const { exports } = manifest;
      const entry =
        typeof exports === "object" && exports !== null && Object.keys(exports).some((k) => k.startsWith("."))
          ? (exports as Record<string, Exports>)[subpath]
          : subpath === "."
            ? (exports ?? manifest.module ?? manifest.main ?? "index.js")
            : subpath;
      const target = entry === undefined ? undefined : pickExport(entry as Exports);
      if (target === undefined) throw new Error(`${name} does not export ${subpath}`);
      const file = join(root, target);
      if (!existsSync(file)) throw new Error(`${file} is missing (is ${name} built?)`);
      return file;
    }
    if (dirname(dir) === dir) throw new Error(`cannot find package ${name} from ${from}`);
  }
}

/** Walks every module `entry` loads at run time. */
export function walkImports(entry: string): ImportGraph {
  const files = new Set<string>();
  const builtins: ImportGraph["builtins"] = [];
  const pending = [entry];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    for (const specifier of runtimeSpecifiers(file)) {
      if (specifier.startsWith("node:") || NODE_BUILTINS.has(specifier.split("/")[0] ?? "")) {
        builtins.push({ specifier, from: file });
      } else if (specifier.startsWith(".") || specifier.startsWith("/")) {
        pending.push(resolveRelative(specifier, file));
      } else {
        pending.push(resolvePackage(specifier, file));
      }
    }
  }
  return { files: [...files], builtins };
}
