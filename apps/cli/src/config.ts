/**
 * Where the CLI finds its server and credentials: `REFVID_BASE_URL`, `REFVID_API_KEY` and
 * `REFVID_ADMIN_TOKEN`, each of which wins over the profile saved by `refvid login` in
 * `$XDG_CONFIG_HOME/refvid/config.json` (or `~/.config/refvid/config.json`), mode 600.
 */
import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { createRefvidClient, type RefvidClient } from "@refvid/client";
import { UsageError } from "./errors.js";

export const DEFAULT_PROFILE = "default";
const USER_AGENT = "refvid-cli/0.1.0";

export interface Profile {
  base_url?: string;
  api_key?: string;
  admin_token?: string;
}

export interface ConfigFile {
  profiles: Record<string, Profile>;
}

export interface Config {
  baseUrl: string | undefined;
  apiKey: string | undefined;
  adminToken: string | undefined;
  profile: string;
  path: string;
}

export function configPath(env = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(base, "refvid", "config.json");
}

export async function readConfigFile(path = configPath()): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>;
    return { profiles: parsed.profiles ?? {} };
  } catch {
    throw new UsageError(`${path} is not valid JSON: fix it or delete it and run \`refvid login\` again`);
  }
}

/** Saves `profile` under `name`, keeping the others; the file is readable by its owner only. */
export async function saveProfile(name: string, profile: Profile, path = configPath()): Promise<void> {
  const file = await readConfigFile(path);
  file.profiles[name] = profile;
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600); // writeFile's mode is filtered by the umask
  await rename(temporary, path);
}

/**
 * The configuration in force: each variable, else the profile's value. A profile named with
 * --profile must exist, unless `creating` it (`refvid login`).
 */
export async function loadConfig(
  profileName: string | undefined,
  { env = process.env, creating = false }: { env?: NodeJS.ProcessEnv; creating?: boolean } = {},
): Promise<Config> {
  const path = configPath(env);
  const file = await readConfigFile(path);
  const profile = profileName ?? DEFAULT_PROFILE;
  const saved = file.profiles[profile];
  if (profileName !== undefined && !saved && !creating) {
    throw new UsageError(
      `no profile "${profileName}" in ${path}: run \`refvid login --profile ${profileName}\``,
    );
  }
  return {
    baseUrl: env.REFVID_BASE_URL || saved?.base_url,
    apiKey: env.REFVID_API_KEY || saved?.api_key,
    adminToken: env.REFVID_ADMIN_TOKEN || saved?.admin_token,
    profile,
    path,
  };
}

function requireBaseUrl(config: Config): string {
  if (!config.baseUrl) {
    throw new UsageError(
      "no server configured: run `refvid login`, or set REFVID_BASE_URL and REFVID_API_KEY",
    );
  }
  return config.baseUrl;
}

/** A client with the configured API key. */
export function apiClient(config: Config): RefvidClient {
  const baseUrl = requireBaseUrl(config);
  if (!config.apiKey) {
    throw new UsageError("no API key configured: run `refvid login`, or set REFVID_API_KEY");
  }
  return createRefvidClient({ baseUrl, apiKey: config.apiKey, userAgent: USER_AGENT });
}

/** A client that sends the admin token (`Authorization: Bearer …`), for `client.api`'s admin paths. */
export function adminClient(config: Config): RefvidClient {
  const baseUrl = requireBaseUrl(config);
  if (!config.adminToken) {
    throw new UsageError(
      "admin commands need the server's admin token: set REFVID_ADMIN_TOKEN, or run `refvid login --admin-token …`",
    );
  }
  return createRefvidClient({
    baseUrl,
    apiKey: config.adminToken,
    authScheme: "Bearer",
    userAgent: USER_AGENT,
  });
}
