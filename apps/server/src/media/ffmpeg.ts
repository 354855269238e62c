/**
 * Runs ffmpeg and ffprobe from the npm packages that ship them (Debian's binaries as a fallback),
 * always with an argument array (no shell), a timeout and an abort signal.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);

function binary(pkg: string, fallback: string): string {
  try {
    const path = (require(pkg) as { path: string }).path;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return fallback;
  }
}

export const FFMPEG = binary("@ffmpeg-installer/ffmpeg", "ffmpeg");
export const FFPROBE = binary("@ffprobe-installer/ffprobe", "ffprobe");

export interface RunOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

function run(file: string, args: string[], { timeoutMs, signal }: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024, signal, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error && signal?.aborted) reject(signal.reason);
        else if (error) {
          const tail = stderr.trim().split("\n").slice(-3).join(" | ");
          reject(
            Object.assign(
              new Error(`${file.split("/").pop()} failed: ${error.message.split("\n")[0]} ${tail}`),
              { cause: error },
            ),
          );
        } else resolve(stdout);
      },
    );
  });
}

export const ffmpeg = (args: string[], options: RunOptions) =>
  run(FFMPEG, ["-hide_banner", "-nostdin", "-y", ...args], options);

/** Container duration in seconds, from ffprobe. */
export async function probeDuration(path: string, options: RunOptions): Promise<number> {
  const out = await run(
    FFPROBE,
    ["-v", "error", "-show_entries", "format=duration", "-of", "default=nw=1:nk=1", path],
    options,
  );
  const seconds = Number(out.trim());
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`ffprobe found no duration in ${path}`);
  return seconds;
}

/** Width and height of the first video stream (images count as one-frame videos). */
export async function probeSize(
  path: string,
  options: RunOptions,
): Promise<{ width: number; height: number }> {
  const out = await run(
    FFPROBE,
    ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0", path],
    options,
  );
  const [width, height] = out.trim().split(",").map(Number);
  if (!width || !height) throw new Error(`ffprobe found no picture in ${path}`);
  return { width, height };
}
