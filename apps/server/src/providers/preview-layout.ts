/**
 * Output geometry and length for the preview provider. The resolution names the short side
 * (720p 16:9 is 1280x720, 720p 9:16 is 720x1280; `2k` and `4k` are 1440 and 2160; a catalog
 * model's resolution the preview cannot read, or none, is 720); `auto`/`adaptive` follow the
 * first visual reference, else 16:9.
 */
const K_SIDE: Record<string, number> = { "2k": 1440, "4k": 2160 };

function shortSide(resolution: string): number {
  const lines = /^(\d{3,4})p$/i.exec(resolution);
  if (lines) return Math.min(2160, Number(lines[1]));
  return K_SIDE[resolution.toLowerCase()] ?? 720;
}

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

export function outputSize(
  resolution: string,
  aspectRatio: string,
  reference?: { width: number; height: number },
): { width: number; height: number } {
  const short = shortSide(resolution);
  let ratio = 16 / 9;
  const named = /^(\d+):(\d+)$/.exec(aspectRatio);
  if (named) ratio = Number(named[1]) / Number(named[2]);
  else if (reference) ratio = reference.width / reference.height;
  return ratio >= 1
    ? { width: even(short * ratio), height: short }
    : { width: short, height: even(short / ratio) };
}

/** `duration: "auto"`: the clips' total when there are clips, else 5 s per image; 4 s to the model maximum. */
export function autoSeconds(clipSeconds: number[], images: number, maxSeconds: number): number {
  const wanted = clipSeconds.length > 0 ? Math.ceil(clipSeconds.reduce((a, b) => a + b, 0)) : images * 5;
  return Math.min(maxSeconds, Math.max(4, wanted));
}
