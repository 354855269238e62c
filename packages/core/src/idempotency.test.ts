import { describe, expect, it } from "vitest";
import { decideIdempotency, type IdempotencyRecord } from "./idempotency.js";

const now = new Date("2026-01-01T00:00:00Z");
const record = (patch: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  requestHash: "h1",
  runId: "run_1",
  expiresAt: new Date(now.getTime() + 1000),
  response: { status: 201, body: { run_id: "run_1" } },
  ...patch,
});

describe("decideIdempotency", () => {
  it("admits a key never seen, or whose record expired", () => {
    expect(decideIdempotency(null, "h1", now)).toEqual({ kind: "new" });
    expect(decideIdempotency(record({ expiresAt: now }), "h1", now)).toEqual({ kind: "new" });
  });

  it("refuses the same key with another request, whatever the record's state", () => {
    expect(decideIdempotency(record(), "h2", now)).toEqual({ kind: "mismatch" });
    expect(decideIdempotency(record({ response: null }), "h2", now)).toEqual({ kind: "mismatch" });
  });

  it("replays a stored response", () => {
    expect(decideIdempotency(record(), "h1", now)).toEqual({
      kind: "replay",
      runId: "run_1",
      status: 201,
      body: { run_id: "run_1" },
    });
  });

  it("follows the run of a sync submit that has not ended", () => {
    expect(decideIdempotency(record({ response: null }), "h1", now)).toEqual({
      kind: "pending",
      runId: "run_1",
    });
  });
});
