export { MemoryStore } from "./memory-store.js";
export type * from "./types.js";
