/**
 * 1,000 run event streams held open at once against the real server (memory store): each gets the
 * run first and `done` at its end; the memory they cost is measured and bounded.
 */
import { describe, expect, it, onTestFinished } from "vitest";
import { useTestRefvid } from "./harness.js";
import { type SseEvent, stream } from "./sse.js";

const STREAMS = 1_000;
const RUNS = 10;
const t = useTestRefvid({
  REFVID_MAX_STREAMS_PER_KEY: String(STREAMS),
  REFVID_MAX_CONNECTIONS: "4000",
  // All from 127.0.0.1.
  REFVID_MAX_CONNECTIONS_PER_ADDRESS: "0",
});

describe("1,000 concurrent run event streams", () => {
  it("are all served to the end, for a bounded amount of memory", { timeout: 60_000 }, async () => {
    // The server is in this process: a warning of "too many" listeners (each stream listens for
    // the shutdown, by design) would reach an operator's log.
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "MaxListenersExceededWarning") warnings.push(warning);
    };
    process.on("warning", onWarning);
    onTestFinished(() => {
      process.off("warning", onWarning);
    });
    const tenant = await t.tenant({ rateLimitPerMinute: 100_000 });
    const runs: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const res = await tenant.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
        input: { prompt: `held ${i} [simulate:delay=4000]`, image_urls: ["https://example.com/a.png"] },
      });
      runs.push(res.body.run_id);
    }
    const before = process.memoryUsage().rss;
    let opened = 0;
    let allOpen: () => void = () => {};
    const everyOneOpen = new Promise<void>((resolve) => {
      allOpen = resolve;
    });
    const streams = Array.from({ length: STREAMS }, (_, i) =>
      stream(t.url, tenant.apiKey, runs[i % RUNS] as string, {
        until: (events: SseEvent[]) => {
          if (events.length === 1 && ++opened === STREAMS) allOpen();
          return events.at(-1)?.event === "done";
        },
      }),
    );
    await everyOneOpen;
    const held = process.memoryUsage().rss - before;
    process.stderr.write(
      `${STREAMS} open streams: +${(held / 2 ** 20).toFixed(1)} MiB RSS (server and clients in one process)\n`,
    );
    expect(held).toBeLessThan(200 * 2 ** 20);

    const results = await Promise.all(streams);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.every((r) => r.events.at(-1)?.data.status === "succeeded")).toBe(true);
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
