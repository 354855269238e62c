import { describe, expect, it } from "vitest";
import { copy } from "./copy.js";

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
});
