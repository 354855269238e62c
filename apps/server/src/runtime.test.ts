import { describe, expect, it } from "vitest";
import { LAST_ANSWERS_MS } from "./http/drain.js";
import { stopDeadlineMs, WORKER_GRACE_MS } from "./runtime.js";

describe("stopDeadlineMs", () => {
  it.each([
    [{ drainMs: 25_000, webhookTimeoutMs: 10_000 }, 55_000],
    [{ drainMs: 0, webhookTimeoutMs: 10_000 }, 30_000],
    [{ drainMs: 600_000, webhookTimeoutMs: 60_000 }, 680_000],
  ])(
    "gives %j a forced exit after %i ms, past the drain, its last answers and the worker's grace",
    (config, want) => {
      expect(stopDeadlineMs(config)).toBe(want);
      expect(want).toBeGreaterThan(
        config.drainMs + LAST_ANSWERS_MS + WORKER_GRACE_MS + config.webhookTimeoutMs,
      );
    },
  );
});
