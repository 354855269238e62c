/** Recognises a store call that lost its database connection (the store recovers by itself). */
import type { StoreConnectionLost } from "./types.js";

export const isConnectionLost = (err: unknown): err is StoreConnectionLost =>
  err instanceof Error && (err as { code?: unknown }).code === "store_connection_lost";
