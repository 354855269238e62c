export * from "./catalog.js";
export * from "./errors.js";
export * from "./limits.js";
export * from "./model-rules.js";
export * from "./money.js";
export * from "./pricing.js";
export * from "./run-states.js";
export * from "./tiers.js";
