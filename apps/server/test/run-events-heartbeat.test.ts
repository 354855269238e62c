/** A quiet run event stream sends `: keep-alive` every 15 s (time driven by a ManualClock). */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../src/manual-clock.js";
import { useTestRefvid } from "./harness.js";
import { stream } from "./sse.js";

const clock = new ManualClock();
const t = useTestRefvid({}, { clock, scheduler: clock });

describe("a quiet event stream", () => {
  it("sends a keep-alive comment every 15 s while the run makes no progress", async () => {
    const tenant = await t.tenant();
    const run = (
      await tenant.call("POST", "/v1/run/lab-d/model-d/reference-to-video", {
        // Ten minutes on the manual clock: the simulated provider's first progress is at one minute.
        input: { prompt: "quiet [simulate:delay=600000]", image_urls: ["https://example.com/a.png"] },
      })
    ).body;
    let opened: () => void = () => {};
    const firstEvent = new Promise<void>((resolve) => {
      opened = resolve;
    });
    const streaming = stream(t.url, tenant.apiKey, run.run_id, {
      until: (events, comments) => {
        if (events.length === 1) opened();
        return comments.length === 2;
      },
    });
    await firstEvent;
    await clock.advance(14_000);
    await clock.advance(1_000); // 15 s: the first keep-alive
    await clock.advance(15_000); // 30 s: the second
    const { events, comments } = await streaming;
    expect(comments).toEqual([": keep-alive", ": keep-alive"]);
    expect(events.length).toBeGreaterThan(0); // queued, perhaps processing: no progress, no end
    expect(events.every((e) => e.event === "run" && e.data.progress === null)).toBe(true);
    await tenant.call("POST", `/v1/runs/${run.run_id}/cancel`);
  });
});
