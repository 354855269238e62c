/** Upload sizes as the playground says them, in the units of refvid's limits (30 MB = 30 × 1,024²). */
import { describe, expect, it } from "vitest";
import { sizeOf } from "../src/upload.js";

describe("sizeOf", () => {
  it.each([
    ["bytes", 740, "740 B"],
    ["kilobytes", 7479, "7.3 kB"],
    ["a limit in whole megabytes", 30 * 1024 * 1024, "30 MB"],
    ["just under a megabyte, rounded", 1_047_000, "1022.5 kB"],
    ["a large video", 150_000_000, "143.1 MB"],
  ])("says %s", (_name, bytes, want) => {
    expect(sizeOf(bytes)).toBe(want);
  });
});
