// Builds dist/main.js, the published `refvid`: the CLI's code and the workspace packages it uses
// (@refvid/client, @refvid/api-types), which are not on the registry, in one ES module; the
// third-party packages stay imports, installed by npm from the CLI's `dependencies` (why: "The
// published CLI bundles refvid's own code only" in docs/decisions.md). Run through `npm run build`
// (turbo builds the workspace packages first: their dist is what is bundled).
import { readFile, rm } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = fileURLToPath(new URL("..", import.meta.url));
const repo = join(root, "../..");
const manifest = JSON.parse(await readFile(join(root, "package.json"), "utf8"));
const dependencies = manifest.dependencies ?? {};
const WORKSPACE = /^@refvid\//;

/** The package name of a bare import (`@scope/name` or `name`, without a subpath). */
const packageOf = (source) =>
  source
    .split("/")
    .slice(0, source.startsWith("@") ? 2 : 1)
    .join("/");

/**
 * Bundles @refvid/* and leaves every declared dependency (and Node's modules) an import. Any other
 * package is an error: it would be bundled, with its licence left behind.
 * @type {import("rolldown").Plugin}
 */
const dependencyGuard = {
  name: "dependency-guard",
  resolveId(source, importer) {
    if (importer === undefined || /^[./]/.test(source) || isBuiltin(source)) return null;
    const name = packageOf(source);
    if (WORKSPACE.test(name)) return null;
    if (name in dependencies) return { id: source, external: true };
    this.error(
      `${name} is imported by ${relative(repo, importer)} but is not in the dependencies of ` +
        "@refvid/cli: add it to apps/cli/package.json with the version its package declares",
    );
  },
};

await rm(join(root, "dist"), { recursive: true, force: true });
const { output } = await build({
  cwd: root,
  input: "src/main.ts",
  platform: "node",
  // The sources import `./x.js` for `./x.ts`, as NodeNext wants.
  resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
  transform: { target: "node20.19" },
  plugins: [dependencyGuard],
  output: { file: "dist/main.js", format: "esm", sourcemap: false },
}).catch((error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
const [main] = output;

// A bundled workspace package's third-party dependencies are installed through the CLI's own, so
// they must be declared there with the same version range.
const bundledPackages = new Set();
for (const id of main.moduleIds) {
  const at = id.lastIndexOf(`${sep}dist${sep}`);
  if (at !== -1 && !id.startsWith(root)) bundledPackages.add(id.slice(0, at));
}
const mismatches = [];
for (const dir of bundledPackages) {
  const bundled = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  for (const [name, range] of Object.entries(bundled.dependencies ?? {})) {
    if (!WORKSPACE.test(name) && dependencies[name] !== range) {
      mismatches.push(`${name}: ${bundled.name} wants ${range}, @refvid/cli declares ${dependencies[name]}`);
    }
  }
}
if (mismatches.length > 0) {
  await rm(join(root, "dist"), { recursive: true, force: true });
  process.stderr.write(
    `apps/cli/package.json must declare the dependencies of the packages it bundles, as they do:\n  ${mismatches.join("\n  ")}\n`,
  );
  process.exit(1);
}
process.stdout.write(
  `dist/main.js: ${main.code.length} characters, bundled ${[...bundledPackages].map((dir) => relative(repo, dir)).join(", ")}\n`,
);
