import { describe, expect, it } from "vitest";
import { canonicalJson, decideIdempotency, hashRequest, type IdempotencyRecord } from "./idempotency.js";

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

describe("canonicalJson", () => {
  it.each([
    [
      "sorts object keys at every depth",
      { b: 1, a: { d: [1, { z: 0, y: 1 }], c: null } },
      '{"a":{"c":null,"d":[1,{"y":1,"z":0}]},"b":1}',
    ],
    ["leaves out undefined members", { a: undefined, b: "x" }, '{"b":"x"}'],
    ["writes scalars as JSON", "é\n", '"é\\n"'],
  ])("%s", (_name, value, want) => {
    expect(canonicalJson(value)).toBe(want);
  });
});

describe("hashRequest", () => {
  it("is the same for bodies that differ only in key order", () => {
    expect(
      hashRequest("lab-a/model-a/reference-to-video", { input: { prompt: "p", duration: 5 }, sync: false }),
    ).toBe(
      hashRequest("lab-a/model-a/reference-to-video", { sync: false, input: { duration: 5, prompt: "p" } }),
    );
  });

  it("differs by model and by body", () => {
    const body = { input: { prompt: "p" } };
    expect(hashRequest("lab-a/model-a/reference-to-video", body)).not.toBe(
      hashRequest("lab-b/model-b/reference-to-video", body),
    );
    expect(hashRequest("lab-a/model-a/reference-to-video", body)).not.toBe(
      hashRequest("lab-a/model-a/reference-to-video", { input: { prompt: "q" } }),
    );
  });
});
