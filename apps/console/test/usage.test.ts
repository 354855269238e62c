/** The usage panel's window, as it asks for it. */
import { describe, expect, it } from "vitest";
import { addDays, usageWindow } from "../src/usage.js";

describe("usageWindow", () => {
  it.each([
    [
      "two dates, both included",
      "2026-11-01",
      "2026-11-30",
      "2026-11-01T00:00:00.000Z",
      "2026-12-01T00:00:00.000Z",
    ],
    ["one day", "2026-11-22", "2026-11-22", "2026-11-22T00:00:00.000Z", "2026-11-23T00:00:00.000Z"],
  ])("covers %s", (_name, from, to, wantFrom, wantTo) => {
    expect(usageWindow(from, to)).toEqual({ from: wantFrom, to: wantTo });
  });

  it("counts days in UTC across a month's end", () => {
    expect(addDays("2026-12-31", 1)).toBe("2027-01-01");
  });
});
