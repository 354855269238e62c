export { type AppOptions, createApp } from "./app.js";
export { type Config, ConfigError, loadConfig } from "./config.js";
export type { AppDeps } from "./deps.js";
export { buildDeps, type RunningRefvid, type StartOptions, startRefvid } from "./runtime.js";
export { seedDemo } from "./seed.js";
