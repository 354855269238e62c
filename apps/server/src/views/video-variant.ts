/**
 * The files of a succeeded run: its video and the poster frame and sprite sheet rendered from it
 * (docs/decisions.md, "Posters and sprite sheets").
 */
import { assertNever } from "@refvid/core";
import type { RunOutputFile } from "@refvid/store";

/** One of a run's files, as `GET /v1/videos/{id}/content?variant=` names them. */
export type VideoVariant = "video" | "thumbnail" | "spritesheet";

/**
 * The blob id of `variant` of a run's output; null when the run has no output, or when its poster
 * or sprite sheet could not be made.
 */
export function videoVariantFileId(output: RunOutputFile | null, variant: VideoVariant): string | null {
  if (!output) return null;
  switch (variant) {
    case "video":
      return output.fileId;
    case "thumbnail":
      return output.thumbnailFileId ?? null;
    case "spritesheet":
      return output.spritesheetFileId ?? null;
    default:
      return assertNever(variant);
  }
}
