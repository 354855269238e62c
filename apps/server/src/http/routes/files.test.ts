import { describe, expect, it } from "vitest";
import { parseRange } from "./files.js";

describe("parseRange over a 1000-byte file", () => {
  it.each<[string | undefined, ReturnType<typeof parseRange>]>([
    [undefined, null],
    ["bytes=0-99", { start: 0, end: 99 }],
    ["bytes=900-", { start: 900, end: 999 }],
    ["bytes=950-5000", { start: 950, end: 999 }],
    ["bytes=-50", { start: 950, end: 999 }],
    ["bytes=-5000", { start: 0, end: 999 }],
    ["bytes=1000-", "unsatisfiable"],
    ["bytes=-0", "unsatisfiable"],
    ["bytes=100-50", null],
    ["bytes=0-1,5-9", null],
    ["items=0-1", null],
    ["bytes=-", null],
  ])("%s", (header, want) => {
    expect(parseRange(header, 1000)).toEqual(want);
  });
});
