import { describe, expect, it } from "vitest";
import { formatUsd, parseUsd } from "./money.js";

describe("money", () => {
  it.each([
    [0, "0.00"],
    [360_000, "0.36"],
    [294_000, "0.294"],
    [1, "0.000001"],
    [100_000_000, "100.00"],
    [-500_000, "-0.50"],
    [7_000_000_000, "7000.00"],
  ])("formats %i micros as %s", (micros, text) => {
    expect(formatUsd(micros)).toBe(text);
    expect(parseUsd(text)).toBe(micros);
  });

  it.each(["", "1.", ".5", "1.0000001", "1e3", "abc", "1,00", " 1.00"])("rejects %j", (text) => {
    expect(parseUsd(text)).toBeNull();
  });

  it("parses whole dollars", () => expect(parseUsd("350")).toBe(350_000_000));
  it("refuses non-integers when formatting", () => expect(() => formatUsd(0.5)).toThrow(RangeError));
});
