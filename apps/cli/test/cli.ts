/**
 * Running the built `refvid` as a user would: `node apps/cli/dist/main.js …` in a child process,
 * piped, or in a pseudo-terminal made by util-linux `script`. Each run gets a clean environment
 * (no REFVID_*, NO_COLOR or FORCE_COLOR from the outside) and a home of its own.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inject } from "vitest";
import type { ServerAddress } from "./refvid-server.js";

export { freePort } from "@refvid/test-browser/ports";

export const CLI = fileURLToPath(new URL("../dist/main.js", import.meta.url));

export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string>;
  cwd?: string;
}

/** A fresh directory for a test's home, config and downloads (removed after the suite). */
export function tempDir(prefix = "dir-"): string {
  return mkdtempSync(join(inject("scratch"), prefix));
}

const home = tempDir("home-");

function environment(env: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "",
    HOME: home,
    XDG_CONFIG_HOME: join(home, ".config"),
    LANG: "C.UTF-8",
    ...env,
  };
}

/** Runs `refvid args…` with stdin, stdout and stderr piped (stdin closed at once). */
export function cli(args: string[], options: CliOptions = {}): Promise<Result> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: environment(options.env),
    cwd: options.cwd ?? home,
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

export interface Background {
  /** Resolves once stdout shows `text`. */
  waitFor(text: string): Promise<void>;
  stdout(): string;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal?: NodeJS.Signals): Promise<Result>;
}

/** Starts a long-running `refvid args…` (like `webhooks listen`), piped. */
export function start(args: string[], options: CliOptions = {}): Background {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: environment(options.env),
    cwd: options.cwd ?? home,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
    for (const w of waiters.filter((w) => stdout.includes(w.text))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const closed = new Promise<Result>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
  return {
    waitFor: (text) =>
      stdout.includes(text)
        ? Promise.resolve()
        : new Promise((resolve, reject) => {
            waiters.push({ text, resolve });
            closed.then((r) =>
              reject(new Error(`exited ${r.code} before printing ${text}: ${r.stdout}${r.stderr}`)),
            );
          }),
    stdout: () => stdout,
    stop: (signal = "SIGINT") => {
      child.kill(signal);
      return closed;
    },
  };
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export interface PtySession {
  /** Everything the terminal showed so far. */
  output(): string;
  /** Resolves once the terminal shows `text`. */
  waitFor(text: string): Promise<void>;
  /** Types into the terminal. */
  type(keys: string): void;
  /** Resolves with the exit code of refvid (script -e passes it on) and the whole output. */
  done: Promise<{ code: number | null; output: string }>;
}

/** Runs `refvid args…` in a pseudo-terminal: stdin, stdout and stderr are all a TTY. */
export function pty(args: string[], options: CliOptions = {}): PtySession {
  const command = [process.execPath, CLI, ...args].map(shellQuote).join(" ");
  const child = spawn("script", ["-qfec", command, "/dev/null"], {
    env: { ...environment(options.env), TERM: "xterm-256color" },
    cwd: options.cwd ?? home,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let output = "";
  const waiters: { text: string; resolve: () => void }[] = [];
  const onData = (c: Buffer) => {
    output += c.toString();
    for (const w of [...waiters]) {
      if (output.includes(w.text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  child.stdout.on("data", onData);
  child.stderr.on("data", onData);
  const done = new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => {
      child.stdin.destroy();
      resolve({ code, output });
    });
  });
  return {
    output: () => output,
    waitFor: (text) =>
      output.includes(text) ? Promise.resolve() : new Promise((resolve) => waiters.push({ text, resolve })),
    type: (keys) => child.stdin.write(keys),
    done,
  };
}

/** The suite's server (global-setup.ts). */
const suiteServer = (): ServerAddress => ({ baseUrl: inject("baseUrl"), adminToken: inject("adminToken") });

/** Calls the admin API of `server` (the suite's by default); fails on any status but 2xx. */
export async function admin(
  method: string,
  path: string,
  body?: unknown,
  server: ServerAddress = suiteServer(),
): Promise<any> {
  const res = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await res.json()) as any;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

export interface Account {
  organizationId: string;
  apiKeyId: string;
  key: string;
  /** REFVID_BASE_URL and REFVID_API_KEY for this key. */
  env: Record<string, string>;
}

/** A fresh organization with 100 USD and one key (test by default), on `server` (the suite's by default). */
export async function newAccount(
  options: { environment?: "live" | "test"; rateLimitPerMinute?: number; server?: ServerAddress } = {},
): Promise<Account> {
  const server = options.server ?? suiteServer();
  const call = (path: string, body: unknown) => admin("POST", path, body, server);
  const org = await call("/admin/v1/organizations", { name: "CLI test" });
  await call(`/admin/v1/organizations/${org.organization_id}/top-ups`, { amount_usd: "100.00" });
  const key = await call(`/admin/v1/organizations/${org.organization_id}/api-keys`, {
    environment: options.environment ?? "test",
    ...(options.rateLimitPerMinute ? { rate_limit_per_minute: options.rateLimitPerMinute } : {}),
  });
  return {
    organizationId: org.organization_id,
    apiKeyId: key.api_key_id,
    key: key.key,
    env: { REFVID_BASE_URL: server.baseUrl, REFVID_API_KEY: key.key },
  };
}

/** Submits a run straight to the API (no CLI), for tests about following or cancelling one. */
export async function submitRun(
  account: Account,
  prompt: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await fetch(`${inject("baseUrl")}/v1/run/lab-d/model-d/reference-to-video`, {
    method: "POST",
    headers: { authorization: `Key ${account.key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: { prompt, image_urls: ["https://example.com/a.png"] }, ...extra }),
  });
  if (res.status !== 201) throw new Error(`submit: ${res.status} ${await res.text()}`);
  return res.json();
}

export const IMAGE = "https://example.com/a.png";

/** A table's cells as printed (cli-table3's plain borders), the header row first. */
export const cells = (out: string): string[][] =>
  out
    .split("\n")
    .filter((line) => line.startsWith("│"))
    .map((line) =>
      line
        .split("│")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
/** The ANSI escape that starts every colour and cursor sequence. */
export const ESC = "\u001b[";
