import { describe, expect, it } from "vitest";
import type { RunRecord } from "../types.js";
import { copy, copyRun } from "./copy.js";

describe("copy", () => {
  it("copies records deeply: nested objects, arrays and dates are new, values equal", () => {
    const record = {
      id: "run_1",
      input: { prompt: "p", image_urls: ["https://example.com/a.png"], nested: { deep: [1, { x: null }] } },
      createdAt: new Date("2026-01-01T00:00:00Z"),
      completedAt: null,
      attempts: 2,
      ok: true,
    };
    const copied = copy(record);
    expect(copied).toStrictEqual(record);
    expect(copied.input).not.toBe(record.input);
    expect(copied.input.image_urls).not.toBe(record.input.image_urls);
    expect(copied.input.nested.deep[1]).not.toBe(record.input.nested.deep[1]);
    expect(copied.createdAt).not.toBe(record.createdAt);
    copied.createdAt.setTime(0);
    expect(record.createdAt.toISOString()).toBe("2026-01-01T00:00:00.000Z");
  });

  it("keeps a key named __proto__ as a key, never as the copy's prototype", () => {
    const metadata = JSON.parse('{"__proto__": {"polluted": "yes"}, "a": "b"}');
    const copied = copy(metadata);
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(["__proto__", "a"]);
    expect(copied.polluted).toBeUndefined();
    expect(JSON.stringify(copied)).toBe('{"__proto__":{"polluted":"yes"},"a":"b"}');
  });

  it("falls back to structuredClone for anything but plain data", () => {
    const map = new Map([["k", { v: 1 }]]);
    const copied = copy({ map });
    expect(copied.map).toBeInstanceOf(Map);
    expect(copied.map).not.toBe(map);
    expect(copied.map.get("k")).toEqual({ v: 1 });
  });

  it("copies a run record field by field as deeply as copy does, every field kept", () => {
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const run: RunRecord = {
      id: "run_1",
      organizationId: "org_1",
      apiKeyId: "key_1",
      environment: "live",
      endpoint: "lab-d/model-d/reference-to-video",
      input: { prompt: "p", image_urls: ["https://example.com/a.png"] },
      status: "failed",
      webhookUrl: "https://example.com/hook",
      webhookEvents: ["started", "completed"],
      metadata: { a: "b" },
      reserved: 284_000,
      priceUnit: "second",
      unitPrice: 71_000,
      reservedSeconds: 4,
      charged: 0,
      billableSeconds: 0,
      output: { fileId: "file_1", fileName: "v.mp4", contentType: "video/mp4", durationSeconds: 4 },
      error: { type: "provider_error", code: 502, message: "no" },
      progress: 0.5,
      queuePosition: 3,
      priority: 1,
      createdAt: at(1),
      startedAt: at(2),
      completedAt: at(3),
      leaseOwner: "worker-1",
      leaseExpiresAt: at(4),
      attempts: 1,
      upstream: { provider: "fal", id: "job_1", urls: { status: "https://example.com/s" } },
      provider: "fal",
      route: "fal-seedance",
      vendorCost: 181_440,
    };
    const copied = copyRun(run);
    expect(copied).toStrictEqual(copy(run));
    expect(Object.keys(copied).sort()).toEqual(Object.keys(run).sort());
    for (const key of Object.keys(run) as (keyof RunRecord)[]) {
      if (run[key] !== null && typeof run[key] === "object") expect(copied[key]).not.toBe(run[key]);
    }
    expect(copied.input.image_urls).not.toBe(run.input.image_urls);
    expect(copied.upstream?.urls).not.toBe(run.upstream?.urls);
  });
});
