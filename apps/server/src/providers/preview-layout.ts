/**
 * Output geometry and length for the preview provider. The resolution names the short side
 * (720p 16:9 is 1280x720, 720p 9:16 is 720x1280); `auto`/`adaptive` follow the first visual
 * reference, else 16:9.
 */
const SHORT_SIDE: Record<string, number> = {
  "480p": 480,
  "720p": 720,
  "1080p": 1080,
  "480P": 480,
  "768P": 768,
};

const even = (n: number) => Math.max(2, Math.round(n / 2) * 2);

export function outputSize(
  resolution: string,
  aspectRatio: string,
  reference?: { width: number; height: number },
): { width: number; height: number } {
  const short = SHORT_SIDE[resolution];
  if (!short) throw new RangeError(`no size for resolution ${resolution}`);
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
