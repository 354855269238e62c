#!/usr/bin/env node
/**
 * Copies what the given workspaces and the workspaces they depend on publish (their package.json
 * and `files`, as `npm pack` lists them), without source maps, type declarations or tests, into
 * an output folder laid out like the repository, with the lockfile; there, the root package.json
 * lists only those workspaces, and no package.json has dev dependencies: `npm install --omit=dev` there installs their
 * production dependencies at the locked versions and nothing else. The container image's last
 * stage is that folder and its node_modules.
 *
 *   node scripts/deploy/stage.mjs <out> @refvid/server @refvid/cli
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const [out, ...roots] = process.argv.slice(2);
if (!out || roots.length === 0) {
  process.stderr.write("usage: stage.mjs <out> <workspace>...\n");
  process.exit(2);
}

/** Workspace name → folder, from npm's own view of the workspaces. */
const folders = new Map(
  JSON.parse(execFileSync("npm", ["query", ".workspace"], { encoding: "utf8" })).map((w) => [w.name, w.location]),
);
const SKIP = /\.(map|d\.ts|test\.js|tsbuildinfo)$/;

const seen = new Set();
const pending = [...roots];
while (pending.length > 0) {
  const name = pending.pop();
  if (seen.has(name)) continue;
  const folder = folders.get(name);
  if (!folder) throw new Error(`${name} is not a workspace`);
  seen.add(name);
  const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8"));
  for (const dep of Object.keys(manifest.dependencies ?? {})) if (folders.has(dep)) pending.push(dep);
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts", "-w", name], { encoding: "utf8" }),
  );
  let copied = 0;
  for (const { path } of packed.files) {
    if (SKIP.test(path) || path === "package.json") continue;
    mkdirSync(dirname(join(out, folder, path)), { recursive: true });
    cpSync(join(folder, path), join(out, folder, path));
    copied++;
  }
  delete manifest.devDependencies;
  delete manifest.scripts;
  mkdirSync(join(out, folder), { recursive: true });
  writeFileSync(join(out, folder, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  process.stdout.write(`staged ${name} (${folder}): ${copied} files\n`);
}

const root = JSON.parse(readFileSync("package.json", "utf8"));
root.workspaces = [...seen].map((name) => folders.get(name)).sort();
delete root.devDependencies;
delete root.scripts;
writeFileSync(join(out, "package.json"), `${JSON.stringify(root, null, 2)}\n`);
cpSync("package-lock.json", join(out, "package-lock.json"));
