/**
 * The `preview` provider: renders a real H.264/AAC MP4 from the
 * references with ffmpeg, at the requested length, resolution and aspect ratio. Reference images
 * take turns with a gentle zoom, reference clips play in their place, the prompt is the caption,
 * and the audio track is the first reference track, else a generated tone, and only when audio is
 * asked for. Arguments are arrays (no shell) and every call has a timeout.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ffmpegWithProgress, probeDuration, probeSize } from "../media/ffmpeg.js";
import type { LocalReference } from "../media/local-reference.js";
import { autoSeconds, outputSize } from "./preview-layout.js";
import type { Provider, ProviderContext, ProviderJob, ProviderResult } from "./types.js";

const FPS = 24;
const FONTS = ["/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/dejavu/DejaVuSans.ttf"];

export class PreviewProvider implements Provider {
  readonly usesReferences = true;
  private readonly font = FONTS.find((f) => existsSync(f));

  async run(job: ProviderJob, { signal, onProgress }: ProviderContext): Promise<ProviderResult> {
    const { request, references, workDir } = job;
    const visuals = references.filter((r) => r.kind !== "audio");
    const first = visuals[0];
    const size = outputSize(
      request.resolution,
      request.aspectRatio,
      first ? await probeSize(first.path, { timeoutMs: 20_000, signal }) : undefined,
    );
    const clips = visuals.filter((r) => r.kind === "video").map((r) => r.durationSeconds ?? 0);
    const seconds =
      request.duration === "auto"
        ? autoSeconds(clips, visuals.length - clips.length, job.maxDurationSeconds)
        : request.duration;
    const audio = request.generateAudio ? references.find((r) => r.kind === "audio") : undefined;

    const args: string[] = [];
    const filters: string[] = [];
    const segment = seconds / Math.max(1, visuals.length);
    const frames = Math.max(1, Math.round(segment * FPS));
    const fit = `scale=${size.width}:${size.height}:force_original_aspect_ratio=decrease,pad=${size.width}:${size.height}:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1`;
    visuals.forEach((ref, i) => {
      if (ref.kind === "image") {
        args.push("-i", ref.path);
        filters.push(
          `[${i}:v]${fit},zoompan=z='min(zoom+0.0008,1.08)':x='iw/2-(iw/zoom/2)':y='ih/2-(ih/zoom/2)':d=${frames}:s=${size.width}x${size.height}:fps=${FPS},format=yuv420p[v${i}]`,
        );
      } else {
        args.push("-i", ref.path);
        filters.push(
          `[${i}:v]${fit},fps=${FPS},tpad=stop_mode=clone:stop_duration=${segment.toFixed(3)},trim=duration=${segment.toFixed(3)},setpts=PTS-STARTPTS,format=yuv420p[v${i}]`,
        );
      }
    });
    if (visuals.length === 0) {
      args.push("-f", "lavfi", "-i", `color=c=0x1d2330:s=${size.width}x${size.height}:r=${FPS}:d=${seconds}`);
      filters.push("[0:v]format=yuv420p[v0]");
    }
    const count = Math.max(1, visuals.length);
    const joined =
      count > 1
        ? `${Array.from({ length: count }, (_, i) => `[v${i}]`).join("")}concat=n=${count}:v=1:a=0[vj]`
        : "[v0]null[vj]";
    filters.push(joined);
    filters.push(
      this.font ? `[vj]${caption(request.prompt, this.font, size.height)}[vout]` : "[vj]null[vout]",
    );

    const videoInputs = Math.max(1, visuals.length);
    if (audio) {
      args.push("-stream_loop", "-1", "-i", audio.path);
      filters.push(`[${videoInputs}:a]atrim=duration=${seconds},asetpts=PTS-STARTPTS[aout]`);
    } else if (request.generateAudio) {
      args.push("-f", "lavfi", "-i", `sine=frequency=220:sample_rate=44100:duration=${seconds}`);
      filters.push(`[${videoInputs}:a]volume=0.2[aout]`);
    }
    const out = join(workDir, "preview.mp4");
    onProgress(0.1);
    // The render's own progress, from 0.1 to 0.95 (the probe and the store take the rest).
    let reported = 0.1;
    const onFraction = (fraction: number) => {
      const progress = 0.1 + 0.85 * fraction;
      if (progress <= reported) return;
      reported = progress;
      onProgress(progress);
    };
    await ffmpegWithProgress(
      [
        ...args,
        "-filter_complex",
        filters.join(";"),
        "-map",
        "[vout]",
        ...(request.generateAudio ? ["-map", "[aout]", "-c:a", "aac", "-b:a", "96k"] : []),
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-crf",
        "26",
        "-pix_fmt",
        "yuv420p",
        "-r",
        String(FPS),
        "-t",
        String(seconds),
        "-movflags",
        "+faststart",
        out,
      ],
      seconds,
      { timeoutMs: Math.max(60_000, seconds * 20_000), signal, onFraction },
    );
    if (reported < 0.95) onProgress(0.95);
    return { path: out, durationSeconds: await probeDuration(out, { timeoutMs: 20_000, signal }) };
  }
}

/** The prompt as a two-line caption at the bottom, escaped for drawtext. */
function caption(prompt: string, font: string, height: number): string {
  const text = prompt
    .replace(/\[simulate:[^\]]*\]/g, "")
    .trim()
    .slice(0, 90);
  const escaped = text
    .replace(/\\/g, "\\\\\\\\")
    .replace(/'/g, "\u2019")
    .replace(/:/g, "\\:")
    .replace(/%/g, "\\%");
  const fontSize = Math.max(14, Math.round(height / 24));
  return `drawtext=fontfile=${font}:text='${escaped}':fontcolor=white:fontsize=${fontSize}:box=1:boxcolor=black@0.5:boxborderw=8:x=(w-text_w)/2:y=h-text_h-${fontSize}`;
}

export type { LocalReference };
