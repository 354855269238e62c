/**
 * The `simulated` provider: latency and outcome controlled from the
 * prompt so any client can drive every path end to end. `[simulate:fail]` fails the run with
 * `provider_error`; `[simulate:delay=MS]` sets its run time. Its output is a real, playable MP4
 * of the requested length (10 s for `auto`), made once per length and size and then copied.
 */
import { copyFile, mkdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { type CancelTimer, type Scheduler, systemScheduler } from "../clock.js";
import { ffmpeg, probeDuration } from "../media/ffmpeg.js";
import {
  type Provider,
  type ProviderContext,
  ProviderError,
  type ProviderJob,
  type ProviderResult,
} from "./types.js";

const AUTO_SECONDS = 10;

export class SimulatedProvider implements Provider {
  /** It makes a test pattern; references are neither needed nor fetched. */
  readonly usesReferences = false;
  private readonly made = new Map<string, Promise<{ path: string; durationSeconds: number }>>();

  private readonly scheduler: Scheduler;

  /** `scheduler` times the wait and its progress reports; the system's by default. */
  constructor(private readonly options: { latencyMs: number; cacheDir: string; scheduler?: Scheduler }) {
    this.scheduler = options.scheduler ?? systemScheduler;
  }

  async run(job: ProviderJob, { signal, onProgress }: ProviderContext): Promise<ProviderResult> {
    const prompt = job.request.prompt;
    const delay = /\[simulate:delay=(\d{1,9})\]/.exec(prompt);
    const latencyMs = delay ? Number(delay[1]) : this.options.latencyMs;
    await wait(latencyMs, signal, onProgress, this.scheduler);
    if (prompt.includes("[simulate:fail]"))
      throw new ProviderError("The simulated provider was told to fail ([simulate:fail]).");
    const seconds = job.request.duration === "auto" ? AUTO_SECONDS : job.request.duration;
    const video = await this.video(seconds, job.request.generateAudio);
    const path = join(job.workDir, "output.mp4");
    await copyFile(video.path, path);
    return { path, durationSeconds: video.durationSeconds };
  }

  private video(seconds: number, audio: boolean) {
    const key = `${seconds}-${audio ? "a" : "n"}`;
    let made = this.made.get(key);
    if (!made) {
      made = this.render(key, seconds, audio);
      made.catch(() => this.made.delete(key));
      this.made.set(key, made);
    }
    return made;
  }

  private async render(key: string, seconds: number, audio: boolean) {
    await mkdir(this.options.cacheDir, { recursive: true });
    const path = join(this.options.cacheDir, `simulated-${key}.mp4`);
    const partial = `${path}.${process.pid}.partial.mp4`;
    const args = ["-f", "lavfi", "-i", `testsrc2=size=320x180:rate=24:duration=${seconds}`];
    if (audio) args.push("-f", "lavfi", "-i", `sine=frequency=440:sample_rate=44100:duration=${seconds}`);
    args.push("-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-movflags", "+faststart");
    if (audio) args.push("-c:a", "aac", "-b:a", "64k", "-shortest");
    args.push("-t", String(seconds), partial);
    await ffmpeg(args, { timeoutMs: 60_000 });
    await rename(partial, path);
    return { path, durationSeconds: await probeDuration(path, { timeoutMs: 10_000 }) };
  }
}

/**
 * Waits `ms` on the scheduler in ten steps (one when short), reporting each step's fraction as
 * progress, and stops at once when aborted.
 */
function wait(
  ms: number,
  signal: AbortSignal,
  onProgress: (fraction: number) => void,
  scheduler: Scheduler,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const steps = ms > 200 ? 10 : 1;
    let step = 0;
    let cancel: CancelTimer = () => {};
    const abort = () => {
      cancel();
      reject(signal.reason);
    };
    const next = () => {
      step += 1;
      if (step === steps) {
        signal.removeEventListener("abort", abort);
        resolve();
        return;
      }
      onProgress(step / steps);
      cancel = scheduler.setTimeout(next, ms / steps);
    };
    signal.addEventListener("abort", abort, { once: true });
    cancel = scheduler.setTimeout(next, ms / steps);
  });
}
