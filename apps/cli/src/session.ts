/** What a command's action starts from: its output, the configuration in force, and clients. */
import type { RefvidClient } from "@refvid/client";
import type { Command } from "commander";
import { adminClient, apiClient, type Config, loadConfig } from "./config.js";
import { createOutput, type GlobalOptions, type Output } from "./io.js";

export interface Session {
  io: Output;
  config: Config;
  /** A client with the API key; a usage error when none is configured. */
  client(): RefvidClient;
  /** A client with the admin token; a usage error when none is configured. */
  admin(): RefvidClient;
}

/** `creating`: the command makes the profile named by --profile (`refvid login`), so it may not exist yet. */
export async function session(command: Command, { creating = false } = {}): Promise<Session> {
  const globals = command.optsWithGlobals<GlobalOptions>();
  const io = createOutput(globals);
  const config = await loadConfig(globals.profile, { creating });
  return { io, config, client: () => apiClient(config), admin: () => adminClient(config) };
}
