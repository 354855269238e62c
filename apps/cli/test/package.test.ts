/**
 * The published `refvid`, installed as a user would: `npm pack` the CLI, `npm install -g` the
 * tarball into an empty prefix (its third-party dependencies from the registry, nothing from this
 * checkout), and run the installed command from a folder outside the repository, with a PATH of
 * the prefix and Node alone, against the suite's real server.
 */
import { execFile, spawn } from "node:child_process";
import { copyFile, mkdir, readdir, readFile } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { parseAst } from "rolldown/parseAst";
import { beforeAll, describe, expect, it } from "vitest";
import { type Account, newAccount, type Result, tempDir } from "./cli.js";

const exec = promisify(execFile);
const CLI_DIR = join(import.meta.dirname, "..");
const REPO = join(CLI_DIR, "../..");
const SCULPTURE = join(REPO, "docs/examples/refs/sculpture.png");

interface Packed {
  name: string;
  version: string;
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: { path: string }[];
}

/**
 * npm's own environment, without what an `npm run` above this test set for its scripts. Under
 * turbo, what npm needs to reach the registry (a CA, a proxy) is passed by apps/cli/turbo.json.
 */
function npmEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^npm_/i.test(name) && !["NODE_PATH", "NODE_OPTIONS", "INIT_CWD"].includes(name),
    ),
  );
}

let packed: Packed;
let prefix: string;
/** The installed package's folder, `<prefix>/lib/node_modules/@refvid/cli`. */
let installed: string;
/** A folder outside the repository: the user's home and working directory. */
let home: string;
let account: Account;

beforeAll(async () => {
  const scratch = tempDir("package-");
  const { stdout } = await exec("npm", ["pack", "--json", "--pack-destination", scratch], {
    cwd: CLI_DIR,
    env: npmEnvironment(),
  });
  const [first] = JSON.parse(stdout) as Packed[];
  if (!first) throw new Error(`npm pack reported nothing: ${stdout}`);
  packed = first;
  prefix = join(scratch, "prefix");
  home = join(scratch, "home");
  const started = performance.now();
  // npm retries a registry it cannot reach for minutes: stop it before the hook's timeout, so that
  // the error shows its log (each fetch, with --loglevel=http) and why it failed.
  await exec(
    "npm",
    [
      "install",
      "-g",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      "--loglevel=http",
      join(scratch, packed.filename),
    ],
    { cwd: scratch, env: npmEnvironment(), timeout: 240_000 },
  );
  const seconds = (performance.now() - started) / 1000;
  installed = join(prefix, "lib/node_modules", packed.name);
  process.stderr.write(
    `${packed.filename}: ${packed.size} B packed, ${packed.unpackedSize} B unpacked, ` +
      `${packed.entryCount} files; npm install -g took ${seconds.toFixed(1)} s\n`,
  );
  await mkdir(home);
  account = await newAccount();
}, 300_000);

/** Runs the installed `refvid` by its path in the prefix, with only the prefix and Node on PATH. */
function refvid(args: string[], env: Record<string, string> = {}): Promise<Result> {
  const child = spawn(join(prefix, "bin", "refvid"), args, {
    cwd: home,
    env: {
      PATH: `${join(prefix, "bin")}:${dirname(process.execPath)}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      LANG: "C.UTF-8",
      ...env,
    },
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stdin.end();
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The modules a program imports, statically or with `import("…")` of a literal, by parsing it. */
function importedModules(code: string): string[] {
  const found: string[] = [];
  const visit = (node: unknown): void => {
    if (typeof node !== "object" || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const { type, source } = node as { type?: string; source?: { type?: string; value?: unknown } };
    if (
      type &&
      /^(ImportDeclaration|ImportExpression|ExportAllDeclaration|ExportNamedDeclaration)$/.test(type) &&
      source?.type === "Literal" &&
      typeof source.value === "string"
    ) {
      found.push(source.value);
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(parseAst(code));
  return found;
}

/** The packages (not Node's modules) the JavaScript files under `dir` import. */
async function importedPackages(dir: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (const file of await readdir(dir, { recursive: true })) {
    if (!file.endsWith(".js")) continue;
    for (const spec of importedModules(await readFile(join(dir, file), "utf8"))) {
      if (spec.startsWith(".") || spec.startsWith("/") || isBuiltin(spec)) continue;
      names.add(
        spec
          .split("/")
          .slice(0, spec.startsWith("@") ? 2 : 1)
          .join("/"),
      );
    }
  }
  return names;
}

describe("the packed CLI", () => {
  it("is a publishable package: bin, engines, licence, README, no source maps, no workspace dependency", async () => {
    const manifest = JSON.parse(await readFile(join(installed, "package.json"), "utf8"));
    const source = JSON.parse(await readFile(join(CLI_DIR, "package.json"), "utf8"));
    expect(manifest.private).toBeUndefined();
    expect(manifest).toMatchObject({
      name: "@refvid/cli",
      version: source.version,
      license: "MIT",
      bin: { refvid: "dist/main.js" },
      engines: { node: expect.any(String) },
    });
    const dependencies = Object.keys(manifest.dependencies ?? {});
    expect(dependencies.filter((name) => name.startsWith("@refvid/"))).toEqual([]);
    // Every package the shipped code imports is a declared dependency: the workspace's are bundled.
    expect(
      [...(await importedPackages(join(installed, "dist")))].filter((n) => !dependencies.includes(n)),
    ).toEqual([]);
    const paths = packed.files.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(["package.json", "README.md", "LICENSE", "dist/main.js"]));
    expect(paths.filter((p) => p.endsWith(".map") || p.endsWith(".ts"))).toEqual([]);
  });

  it("loads every package its code imports from the install, not from this checkout", async () => {
    const names = [...(await importedPackages(join(installed, "dist")))];
    expect(names.length).toBeGreaterThan(0);
    const script = `for (const name of ${JSON.stringify(names)}) { const url = import.meta.resolve(name); if (!url.startsWith(${JSON.stringify(`file://${installed}/`)})) throw new Error(name + " from " + url); await import(name); }`;
    // `-e` resolves bare names from its working directory: the installed package's folder.
    const { stderr } = await exec(process.execPath, ["--input-type=module", "-e", script], {
      cwd: installed,
      env: { PATH: dirname(process.execPath), HOME: home },
    });
    expect(stderr).toBe("");
  });
});

describe("the installed refvid", () => {
  it("prints the package's version and its help", async () => {
    const { version } = JSON.parse(await readFile(join(CLI_DIR, "package.json"), "utf8"));
    const shown = await refvid(["--version"]);
    expect(shown).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: "" });
    const help = await refvid(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: refvid /);
    for (const command of ["run", "price", "runs", "files", "account", "models", "webhooks", "admin"]) {
      expect(help.stdout).toContain(`  ${command} `);
    }
  });

  it("runs the test model with a local reference, follows the run and downloads its video", async () => {
    await copyFile(SCULPTURE, join(home, "sculpture.png"));
    const result = await refvid(
      [
        "run",
        "model-d",
        "--prompt",
        "A slow dolly shot around the sculpture",
        "--image",
        "./sculpture.png",
        "--duration",
        "4s",
        "--yes",
        "--json",
        "--download",
        "video.mp4",
      ],
      account.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({
      status: "succeeded",
      endpoint: "lab-d/model-d/reference-to-video",
      download: { path: "video.mp4" },
    });
    expect(result.stderr).toMatch(/Uploaded \.\/sculpture\.png \(\d+ KB\) as upload_/);
    const video = await readFile(join(home, "video.mp4"));
    expect(video.length).toBe(doc.download.bytes);
    expect(video.subarray(4, 8).toString("latin1")).toBe("ftyp");
  });
});
