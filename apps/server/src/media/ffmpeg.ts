/**
 * Runs ffmpeg and ffprobe from the npm packages that ship them (Debian's binaries as a fallback),
 * always with an argument array (no shell), a timeout and an abort signal.
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { storageFullCodeIn } from "../storage-full.js";

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
  /** Each piece of standard output as it arrives (ffmpeg's `-progress pipe:1` reports). */
  onStdout?: (chunk: string) => void;
}

function run(file: string, args: string[], { timeoutMs, signal, onStdout }: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      file,
      args,
      { timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 16 * 1024 * 1024, signal, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (error && signal?.aborted) reject(signal.reason);
        else if (error) {
          const tail = stderr.trim().split("\n").slice(-3).join(" | ");
          // A full disk is said only in ffmpeg's output; its code lets the worker tell it apart.
          const full = storageFullCodeIn(stderr);
          reject(
            Object.assign(
              new Error(`${file.split("/").pop()} failed: ${error.message.split("\n")[0]} ${tail}`),
              { cause: error },
              full ? { code: full, path: args.at(-1) } : {},
            ),
          );
        } else resolve(stdout);
      },
    );
    if (onStdout) child.stdout?.on("data", (chunk: Buffer | string) => onStdout(String(chunk)));
  });
}

export const ffmpeg = (args: string[], options: RunOptions) =>
  run(FFMPEG, ["-hide_banner", "-nostdin", "-y", ...args], options);

/**
 * ffmpeg writing `seconds` of output, reporting how far it has got as a fraction (0 to 1) from its
 * `-progress` reports (about two a second): the output time written over `seconds`.
 */
export function ffmpegWithProgress(
  args: string[],
  seconds: number,
  options: RunOptions & { onFraction: (fraction: number) => void },
): Promise<string> {
  const { onFraction, ...rest } = options;
  const lines = progressLines((outSeconds) => onFraction(Math.min(1, Math.max(0, outSeconds / seconds))));
  return ffmpeg(["-progress", "pipe:1", "-nostats", ...args], { ...rest, onStdout: lines });
}

/**
 * Reads ffmpeg's `-progress` output, `key=value` lines in pieces that may split a line, and calls
 * `onTime` with each `out_time_us` (or the older `out_time_ms`, also microseconds) in seconds.
 */
export function progressLines(onTime: (seconds: number) => void): (chunk: string) => void {
  let rest = "";
  return (chunk) => {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) {
      const time = /^out_time_(?:us|ms)=(\d+)\s*$/.exec(line);
      if (time) onTime(Number(time[1]) / 1_000_000);
    }
  };
}

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
