/**
 * Real MP4 files for vendor protocol servers to hand out as their model's output: an H.264 test
 * pattern of a given length, made once per length with the ffmpeg refvid ships.
 */
import { mkdir, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ffmpeg } from "../../src/media/ffmpeg.js";

const made = new Map<number, Promise<string>>();

/** Path of a playable `seconds`-long 320x180 MP4 (H.264, with a silent AAC track). */
export function testVideo(seconds: number): Promise<string> {
  let path = made.get(seconds);
  if (!path) {
    path = (async () => {
      const dir = join(tmpdir(), "refvid-vendor-videos");
      await mkdir(dir, { recursive: true });
      const file = join(dir, `pattern-${seconds}s-${process.pid}.mp4`);
      const exists = await stat(file).then(
        (s) => s.size > 0,
        () => false,
      );
      if (!exists) {
        await ffmpeg(
          [
            ...["-f", "lavfi", "-i", `testsrc2=size=320x180:rate=24:duration=${seconds}`],
            ...["-f", "lavfi", "-i", `anullsrc=r=44100:cl=mono`],
            ...["-t", String(seconds), "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest"],
            ...["-movflags", "+faststart", file],
          ],
          { timeoutMs: 60_000 },
        );
      }
      return file;
    })();
    made.set(seconds, path);
  }
  return path;
}
