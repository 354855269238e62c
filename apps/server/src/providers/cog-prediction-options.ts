/** What a Cog route's predictions are made with: the route's options and the request headers. */
import type { VendorProviderOptions } from "./types.js";

/** What a Cog route's prediction is made with. */
export interface BoxPredictionOptions
  extends Pick<VendorProviderOptions, "name" | "token" | "scheduler" | "clock" | "pollMs" | "adoptWindowMs"> {
  /** Base URL of the container (`http://10.0.0.5:5000`) or of a proxy in front of it. */
  url: string;
  /** A prediction request unanswered this long was taken; 2000 ms by default. */
  acceptAfterMs?: number;
  /** Longest wait between tries while Cog is busy or failing; 10 000 ms by default. */
  maxBackoffMs?: number;
  /** A prediction still running this long after Cog accepted its cancel is uncancellable; 30 s. */
  cancelGraceMs?: number;
  /**
   * After a lost answer, how long the prediction may take to show itself (a probe, a webhook)
   * before it is created again; 30 s, and never more than `adoptWindowMs`.
   */
  lostGraceMs?: number;
}

/**
 * How long the end's webhook of a prediction seen ended is awaited (REFVID_VENDOR_ADOPT_WINDOW_MS
 * sets it): longer than coglet retries it, about 7 minutes (12 tries, 100 ms · 2^n apart).
 */
export const DEFAULT_HOOK_WINDOW_MS = 600_000;

/** A prediction's PUT headers: async ones ask `Prefer: respond-async`. */
export function predictionHeaders(token: string | null, async: boolean): Record<string, string> {
  return {
    accept: "application/json",
    "content-type": "application/json",
    ...(async ? { prefer: "respond-async" } : {}),
    ...(token ? { authorization: `Bearer ${token}` } : {}),
  };
}
