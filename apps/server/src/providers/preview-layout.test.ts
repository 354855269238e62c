import { describe, expect, it } from "vitest";
import { outputSize } from "./preview-layout.js";

describe("outputSize", () => {
  it.each([
    ["720p", "16:9", { width: 1280, height: 720 }],
    ["768P", "9:16", { width: 768, height: 1366 }],
    ["4k", "16:9", { width: 3840, height: 2160 }],
    ["2K", "1:1", { width: 1440, height: 1440 }],
    // A catalog model with no resolution, or one the preview cannot read.
    ["", "16:9", { width: 1280, height: 720 }],
    ["ultra", "auto", { width: 1280, height: 720 }],
  ])("%s at %s", (resolution, aspect, size) => {
    expect(outputSize(resolution, aspect)).toEqual(size);
  });
});
