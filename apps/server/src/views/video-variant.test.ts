import type { RunOutputFile } from "@refvid/store";
import { describe, expect, it } from "vitest";
import { type VideoVariant, videoVariantFileId } from "./video-variant.js";

const video = { fileId: "file_video01", fileName: "run.mp4", contentType: "video/mp4", durationSeconds: 4 };
const previewed = { ...video, thumbnailFileId: "file_poster01", spritesheetFileId: "file_sprite01" };

describe("videoVariantFileId", () => {
  it.each<[string, { output: RunOutputFile | null; variant: VideoVariant }, string | null]>([
    ["the video", { output: previewed, variant: "video" }, "file_video01"],
    ["the poster", { output: previewed, variant: "thumbnail" }, "file_poster01"],
    ["the sprite sheet", { output: previewed, variant: "spritesheet" }, "file_sprite01"],
    ["no poster when none was made", { output: video, variant: "thumbnail" }, null],
    ["no sprite sheet when none was made", { output: video, variant: "spritesheet" }, null],
    ["nothing for a run without output", { output: null, variant: "video" }, null],
  ])("%s", (_name, { output, variant }, want) => {
    expect(videoVariantFileId(output, variant)).toBe(want);
  });
});
