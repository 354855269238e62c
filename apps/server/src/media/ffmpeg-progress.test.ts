import { describe, expect, it } from "vitest";
import { progressLines } from "./ffmpeg.js";

describe("progressLines", () => {
  it("reads out_time_us and out_time_ms as seconds, across pieces that split a line", () => {
    const seen: number[] = [];
    const feed = progressLines((seconds) => seen.push(seconds));
    feed("frame=12\nout_time_us=500");
    feed("000\nout_time=00:00:00.500000\nprogress=continue\n");
    feed("out_time_ms=1250000\r\nprogress=end\n");
    expect(seen).toEqual([0.5, 1.25]);
  });
});
