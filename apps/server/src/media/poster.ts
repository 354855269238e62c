/**
 * A succeeded run's previews, rendered from its video with ffmpeg (docs/decisions.md, "Posters
 * and sprite sheets"): a poster frame, and a sprite sheet of evenly spaced frames for a scrubber.
 * Both are JPEGs, pure functions of the video file and its length.
 */
import { ffmpeg, type RunOptions } from "./ffmpeg.js";

/** The poster's longest side at most; a smaller video keeps its own size. */
export const POSTER_MAX_SIDE = 1280;

/** The sprite sheet's grid: frames left to right, then top to bottom, each this wide. */
export const SPRITE_SHEET = { columns: 5, rows: 5, tileWidth: 160 } as const;

export type SpriteSheetLayout = { columns: number; rows: number; tileWidth: number };

/** Encoder quality for both JPEGs (ffmpeg's 2 best to 31 worst). */
const JPEG_QUALITY = "4";

/** When the poster is taken: a second in, or half-way through a shorter video (past a fade-in). */
export const posterTime = (durationSeconds: number) => Math.min(1, durationSeconds / 2);

/**
 * Writes one frame of `input`, from `posterTime`, to `output` as a JPEG whose longest side is at
 * most `maxSide`, keeping the video's aspect ratio.
 */
export async function renderPoster(
  input: string,
  output: string,
  durationSeconds: number,
  options: RunOptions & { maxSide?: number },
): Promise<void> {
  const { maxSide = POSTER_MAX_SIDE, ...run } = options;
  const fit = `scale='min(${maxSide},iw)':'min(${maxSide},ih)':force_original_aspect_ratio=decrease`;
  await ffmpeg(
    [
      "-ss",
      posterTime(durationSeconds).toFixed(3),
      "-i",
      input,
      "-an",
      "-frames:v",
      "1",
      "-vf",
      fit,
      "-q:v",
      JPEG_QUALITY,
      "-f",
      "image2",
      output,
    ],
    run,
  );
}

/**
 * Writes a sprite sheet of `input` to `output`: `columns × rows` frames spaced evenly over
 * `durationSeconds` (the first at the start), each scaled to `tileWidth` wide, in one JPEG. A
 * video with fewer frames than tiles repeats frames; the grid is always full.
 */
export async function renderSpriteSheet(
  input: string,
  output: string,
  durationSeconds: number,
  options: RunOptions & { layout?: SpriteSheetLayout },
): Promise<void> {
  const { layout = SPRITE_SHEET, ...run } = options;
  const { columns, rows, tileWidth } = layout;
  const frames = columns * rows;
  const filters = [
    // `frames / duration` frames a second, each the frame shown at its time: evenly spaced.
    `fps=${frames}/${durationSeconds.toFixed(3)}:round=down`,
    `scale=${tileWidth}:-2`,
    `tile=${columns}x${rows}`,
  ].join(",");
  await ffmpeg(
    ["-i", input, "-an", "-vf", filters, "-frames:v", "1", "-q:v", JPEG_QUALITY, "-f", "image2", output],
    run,
  );
}
